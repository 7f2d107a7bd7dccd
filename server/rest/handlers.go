package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		// skade's namespaces are one level: none has children
		reply(w, http.StatusOK, map[string]any{"namespaces": [][]string{}})
		return
	}
	nss, err := s.cat.ListNamespaces(r.Context(), parent)
	if err != nil {
		fail(w, err)
		return
	}
	out := make([][]string, 0, len(nss))
	p := principalOf(r)
	for _, ns := range nss {
		if p.may(ns[0]) {
			out = append(out, ns)
		}
	}
	reply(w, http.StatusOK, map[string]any{"namespaces": out})
}

func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace  []string           `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	if len(req.Namespace) == 0 {
		fail(w, fmt.Errorf("%w: namespace is required", errBadRequest))
		return
	}
	if !principalOf(r).may(req.Namespace[0]) {
		forbid(w, req.Namespace[0])
		return
	}
	if err := s.cat.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		fail(w, err)
		return
	}
	props := req.Properties
	if props == nil {
		props = iceberg.Properties{}
	}
	reply(w, http.StatusOK, map[string]any{"namespace": req.Namespace, "properties": props})
}

func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request) {
	ns := namespace(r)
	props, err := s.cat.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		fail(w, err)
		return
	}
	if props == nil {
		props = iceberg.Properties{}
	}
	if _, ok := props["location"]; !ok && len(ns) == 1 {
		// where the namespace's tables are placed, for clients that
		// choose a new table's location (skade's REST lakes)
		props = maps.Clone(props)
		props["location"] = s.cat.NamespaceLocation(ns[0])
	}
	reply(w, http.StatusOK, map[string]any{"namespace": ns, "properties": props})
}

func (s *Server) namespaceExists(w http.ResponseWriter, r *http.Request) {
	ok, err := s.cat.CheckNamespaceExists(r.Context(), namespace(r))
	exists(w, ok, err)
}

func (s *Server) dropNamespace(w http.ResponseWriter, r *http.Request) {
	if err := s.cat.DropNamespace(r.Context(), namespace(r)); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) updateNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Removals []string           `json:"removals"`
		Updates  iceberg.Properties `json:"updates"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	sum, err := s.cat.UpdateNamespaceProperties(r.Context(), namespace(r), req.Removals, req.Updates)
	if err != nil {
		fail(w, err)
		return
	}
	nz := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	reply(w, http.StatusOK, map[string]any{"updated": nz(sum.Updated), "removed": nz(sum.Removed), "missing": nz(sum.Missing)})
}

type tableIdent struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func (t tableIdent) ident() table.Identifier {
	return append(append(table.Identifier{}, t.Namespace...), t.Name)
}

// exists answers a HEAD request: 204 when ok, 404 when not.
func exists(w http.ResponseWriter, ok bool, err error) {
	switch {
	case err != nil:
		fail(w, err)
	case ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// namespaceOf is the request's namespace, after answering 404 (and
// returning ok false) when it does not exist.
func (s *Server) namespaceOf(w http.ResponseWriter, r *http.Request) (table.Identifier, bool) {
	ns := namespace(r)
	if ok, err := s.cat.CheckNamespaceExists(r.Context(), ns); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("namespace %v: %w", ns, icecatalog.ErrNoSuchNamespace)
		}
		fail(w, err)
		return nil, false
	}
	return ns, true
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	ns, ok := s.namespaceOf(w, r)
	if !ok {
		return
	}
	out := []tableIdent{}
	for id, err := range s.cat.ListTables(r.Context(), ns) {
		if err != nil {
			fail(w, err)
			return
		}
		out = append(out, tableIdent{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	reply(w, http.StatusOK, map[string]any{"identifiers": out})
}

// replyLoad answers the spec's LoadTableResult. For a lake in an object
// store its config tells the client how to reach the store, and with
// VendCredentials, with which keys (the principal may see the table: the
// namespace check ran before the handler).
func (s *Server) replyLoad(w http.ResponseWriter, r *http.Request, loc string, meta table.Metadata) {
	config, err := s.cfg.Lake.ObjectStoreProperties(r.Context(), s.cfg.VendCredentials)
	if err != nil {
		fail(w, err)
		return
	}
	if config == nil {
		config = map[string]string{}
	}
	reply(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": meta, "config": config})
}

func (s *Server) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		StageCreate   bool                   `json:"stage-create"`
		Properties    iceberg.Properties     `json:"properties"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Name == "" || req.Schema == nil {
		fail(w, fmt.Errorf("%w: name and schema are required", errBadRequest))
		return
	}
	if req.Location != "" {
		fail(w, fmt.Errorf("%w: a custom table location is not supported: skade places every table in its lake", errUnsupported))
		return
	}
	id := append(namespace(r), req.Name)
	var opts []icecatalog.CreateTableOpt
	if req.PartitionSpec != nil {
		opts = append(opts, icecatalog.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, icecatalog.WithSortOrder(*req.WriteOrder))
	}
	if len(req.Properties) > 0 {
		opts = append(opts, icecatalog.WithProperties(req.Properties))
	}
	if req.StageCreate {
		// the metadata a later commit (AssertCreate) creates the table
		// with; nothing is kept meanwhile
		staged, err := s.cat.StageCreate(r.Context(), id, req.Schema, opts...)
		if err != nil {
			fail(w, err)
			return
		}
		meta := staged.Metadata
		if err := s.cat.Discard(staged); err != nil {
			fail(w, err)
			return
		}
		s.replyLoad(w, r, "", meta)
		return
	}
	tbl, err := s.cat.CreateTable(r.Context(), id, req.Schema, opts...)
	if err != nil {
		fail(w, err)
		return
	}
	s.replyLoad(w, r, tbl.MetadataLocation(), tbl.Metadata())
}

func (s *Server) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.cat.LoadTable(r.Context(), ident(r))
	if err != nil {
		fail(w, err)
		return
	}
	s.replyLoad(w, r, tbl.MetadataLocation(), tbl.Metadata())
}

func (s *Server) tableExists(w http.ResponseWriter, r *http.Request) {
	ok, err := s.cat.CheckTableExists(r.Context(), ident(r))
	exists(w, ok, err)
}

// commitRequest is the spec's CommitTableRequest.
type commitRequest struct {
	Identifier   *tableIdent        `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

func (s *Server) commitTable(w http.ResponseWriter, r *http.Request) {
	var req commitRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	meta, loc, err := s.cat.CommitTable(r.Context(), ident(r), req.Requirements, req.Updates)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": meta})
}

func (s *Server) dropTable(w http.ResponseWriter, r *http.Request) {
	purge, _ := strconv.ParseBool(r.URL.Query().Get("purgeRequested"))
	var err error
	if purge {
		err = s.cat.PurgeTable(r.Context(), ident(r))
	} else {
		err = s.cat.DropTable(r.Context(), ident(r))
	}
	if err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	// reports are accepted, and not kept
	var report json.RawMessage
	if err := decode(r, &report); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// register adopts a table whose metadata file lies in the lake (a table
// dropped with its files kept, or copied in); metadata elsewhere is
// refused, since skade keeps every table inside its lake.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Name == "" || req.MetadataLocation == "" {
		fail(w, fmt.Errorf("%w: name and metadata-location are required", errBadRequest))
		return
	}
	if req.Overwrite {
		fail(w, fmt.Errorf("%w: register with overwrite: drop the table first", errUnsupported))
		return
	}
	tbl, err := s.cat.RegisterTable(r.Context(), append(namespace(r), req.Name), req.MetadataLocation)
	if err != nil {
		fail(w, err)
		return
	}
	s.replyLoad(w, r, tbl.MetadataLocation(), tbl.Metadata())
}

func (s *Server) renameTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Source      tableIdent `json:"source"`
		Destination tableIdent `json:"destination"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	for _, id := range []tableIdent{req.Source, req.Destination} {
		if len(id.Namespace) > 0 && !principalOf(r).may(id.Namespace[0]) {
			forbid(w, id.Namespace[0])
			return
		}
	}
	if _, err := s.cat.RenameTable(r.Context(), req.Source.ident(), req.Destination.ident()); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) commitTransaction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TableChanges []commitRequest `json:"table-changes"`
	}
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	commits := make([]table.TableCommit, len(req.TableChanges))
	for i, c := range req.TableChanges {
		if c.Identifier == nil || c.Identifier.Name == "" {
			fail(w, fmt.Errorf("%w: table change %d has no identifier", errBadRequest, i))
			return
		}
		if ns := c.Identifier.Namespace; len(ns) > 0 && !principalOf(r).may(ns[0]) {
			forbid(w, ns[0])
			return
		}
		commits[i] = table.TableCommit{
			Identifier:   c.Identifier.ident(),
			Requirements: c.Requirements, Updates: c.Updates,
		}
	}
	if err := s.cat.CommitTransaction(r.Context(), commits); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listViews is the spec's ListViews: skade's views, read only over REST
// (skade creates them with CREATE VIEW).
func (s *Server) listViews(w http.ResponseWriter, r *http.Request) {
	ns, ok := s.namespaceOf(w, r)
	if !ok {
		return
	}
	names, err := s.cat.ListViews(r.Context(), strings.Join(ns, "."))
	if err != nil {
		fail(w, err)
		return
	}
	out := []tableIdent{}
	for _, n := range names {
		out = append(out, tableIdent{Namespace: ns, Name: n})
	}
	reply(w, http.StatusOK, map[string]any{"identifiers": out})
}

// loadView is the spec's LoadViewResult: the view's metadata file and its
// Iceberg view metadata (versions, each with its SQL representation).
func (s *Server) loadView(w http.ResponseWriter, r *http.Request) {
	v, err := s.cat.LoadView(r.Context(), append(namespace(r), r.PathValue("view")))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusOK, map[string]any{"metadata-location": v.MetadataLocation, "metadata": v.Metadata, "config": map[string]string{}})
}

func (s *Server) viewExists(w http.ResponseWriter, r *http.Request) {
	_, err := s.cat.LoadView(r.Context(), append(namespace(r), r.PathValue("view")))
	if errors.Is(err, catalog.ErrViewNotFound) {
		exists(w, false, nil)
		return
	}
	exists(w, err == nil, err)
}

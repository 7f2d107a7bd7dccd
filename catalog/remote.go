package catalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// A Catalog opened with OpenRemote stands in for an Iceberg REST catalog
// (skade serve --rest, Polaris, Lakekeeper, Gravitino, …) instead of a
// bbolt file: tables are loaded from it, and commits, creates, drops and
// renames go to it, through iceberg-go's REST client. The catalog server
// validates every commit against the table's current metadata, so writers
// in several processes and machines on one REST catalog get the same
// clean conflicts as on one catalog file.
//
// What differs from a catalog file:
//
//   - A multi-statement transaction publishes as one REST multi-table
//     commit (/v1/transactions/commit) of requirements and updates: each
//     changed table must still have the main snapshot, schema, partition
//     spec and sort order the transaction started from. A table created in
//     the transaction is committed with assert-create.
//   - Drops are not transactional in the REST API: a transaction that drops
//     a table may change nothing else (DROP TABLE alone works).
//   - New tables are placed under their namespace's "location" property,
//     or where a stage-only create says the catalog would put them.
//   - Clones, repair and whole-lake orphan cleanup need the catalog file's
//     pointers and are refused.

// ErrRemoteUnsupported is wrapped by errors for operations a REST-backed
// catalog cannot do.
var ErrRemoteUnsupported = errors.New("not supported on a REST catalog")

// RemoteAuth authenticates to a REST catalog: a bearer token, or OAuth2
// client credentials "id:secret" exchanged at the catalog's token endpoint.
type RemoteAuth struct {
	Token, Credential string
}

// OpenRemote opens the REST catalog at uri (http:// or https://); table
// files are read and written through store, which must reach every
// location the catalog hands out.
func OpenRemote(ctx context.Context, uri string, store Store, auth RemoteAuth) (*Catalog, error) {
	capture := &capturingTransport{base: http.DefaultTransport}
	opts := []icerest.Option{icerest.WithCustomTransport(capture)}
	if auth.Token != "" {
		opts = append(opts, icerest.WithOAuthToken(auth.Token))
	}
	if auth.Credential != "" {
		opts = append(opts, icerest.WithCredential(auth.Credential))
	}
	r, err := icerest.NewCatalog(ctx, Name, uri, opts...)
	if err == nil {
		// /v1/config answers anyone; find out now whether the catalog
		// lets this client in, rather than at the first statement
		_, err = r.ListNamespaces(ctx, nil)
	}
	switch {
	case errors.Is(err, icerest.ErrUnauthorized), errors.Is(err, icerest.ErrAuthorizationExpired),
		errors.Is(err, icerest.ErrForbidden), errors.Is(err, icerest.ErrOAuthError):
		return nil, fmt.Errorf("open REST catalog %s: it refused this client: %w; pass a token or client credentials "+
			"(lake.WithCatalogAuth; the CLI reads $SKADE_CATALOG_TOKEN or $SKADE_CATALOG_CREDENTIAL=id:secret)", uri, err)
	case err != nil:
		return nil, fmt.Errorf("open REST catalog %s: %w", uri, err)
	}
	return &Catalog{remote: r, root: uri, fs: store, capture: capture}, nil
}

// capturingTransport sees every request iceberg-go's REST client sends,
// after it added its headers: it keeps the headers (the current
// Authorization among them) and the URL of the namespaces collection
// (with the catalog's prefix), so that skade can send the one request
// the client has no call for, a stage-only create.
type capturingTransport struct {
	base http.RoundTripper

	mu     sync.Mutex
	header http.Header
	nsURL  *url.URL // …/v1/{prefix}/namespaces
}

func (t *capturingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if i := strings.Index(req.URL.Path, "/namespaces"); i >= 0 {
		u := *req.URL
		u.Path, u.RawPath, u.RawQuery = req.URL.Path[:i+len("/namespaces")], "", ""
		t.mu.Lock()
		t.header, t.nsURL = req.Header.Clone(), &u
		t.mu.Unlock()
	}
	return t.base.RoundTrip(req)
}

// stagedLocation asks the catalog where it would put a new table: a
// stage-create (the REST spec's create without commit), whose answer's
// location is the catalog's choice. Nothing is created.
func (c *Catalog) stagedLocation(ctx context.Context, ident table.Identifier) (string, error) {
	t := c.capture
	t.mu.Lock()
	header, nsURL := t.header.Clone(), t.nsURL
	t.mu.Unlock()
	if nsURL == nil {
		return "", fmt.Errorf("create table %s: no request to the catalog's namespaces was seen yet", identString(ident))
	}
	body, err := json.Marshal(map[string]any{
		"name":         ident[1],
		"schema":       map[string]any{"type": "struct", "schema-id": 0, "fields": []any{}},
		"stage-create": true,
	})
	if err != nil {
		return "", err
	}
	u := nsURL.JoinPath(ident[0], "tables")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return "", fmt.Errorf("create table %s: ask the catalog for a location: %w", identString(ident), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("create table %s: the catalog refused a staged create (%s): %s", identString(ident), resp.Status, bytes.TrimSpace(raw))
	}
	var res struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Metadata.Location == "" {
		return "", fmt.Errorf("create table %s: the catalog's staged create named no location (%v)", identString(ident), err)
	}
	return strings.TrimSuffix(res.Metadata.Location, "/"), nil
}

// Remote reports whether the catalog is a REST catalog (OpenRemote).
func (c *Catalog) Remote() bool { return c.remote != nil }

func errRemote(what string) error {
	return fmt.Errorf("%s: %w (it needs skade's own catalog file)", what, ErrRemoteUnsupported)
}

// rewrap gives a table the REST catalog returned the lake's IO and c as
// its committer, so that writes go through the store and commits come
// back through c. It passes an error through, so that a REST call's
// result can be handed to it whole.
func (c *Catalog) rewrap(tbl *table.Table, err error) (*table.Table, error) {
	if err != nil {
		return nil, err
	}
	return c.WithFS(tbl, c.fs), nil
}

// remoteTableLocation places a new table under its namespace's location.
func (c *Catalog) remoteTableLocation(ctx context.Context, ident table.Identifier) (string, error) {
	props, err := c.remote.LoadNamespaceProperties(ctx, ident[:1])
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(props["location"], "/")
	if base == "" {
		// the catalog keeps no namespace location: let it choose
		return c.stagedLocation(ctx, ident)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base + "/" + ident[1] + "-" + hex.EncodeToString(b[:]), nil
}

// NamespaceLocation is where the tables of namespace ns are placed,
// <root>/<ns>: what a REST catalog reports as the namespace's "location".
func (c *Catalog) NamespaceLocation(ns string) string { return locJoin(c.root, ns) }

// PlaceTable chooses the location of a new table: a fresh directory of
// the lake (NewTableLocation), or on a REST catalog one under the
// namespace's location.
func (c *Catalog) PlaceTable(ctx context.Context, ident table.Identifier) (string, error) {
	if c.remote == nil {
		return c.NewTableLocation(ident)
	}
	ident, err := Normalize(ident)
	if err != nil {
		return "", err
	}
	return c.remoteTableLocation(ctx, ident)
}

// remoteCommit is a staged change for a REST catalog: requirements and
// updates, sent at Publish.
type remoteCommit struct {
	reqs    []table.Requirement
	updates []table.Update
}

// StageUpdates stages updates to the table whose committed metadata is
// base at baseLoc: on a catalog file it applies them and writes the next
// metadata file (StageMetadata); on a REST catalog it keeps them, with
// requirements that the table has not moved, for Publish.
func (c *Catalog) StageUpdates(ctx context.Context, ident table.Identifier, baseLoc string, base table.Metadata, updates []table.Update) (*StagedCommit, error) {
	final, err := table.UpdateTableMetadata(base, updates, baseLoc)
	if err != nil {
		return nil, fmt.Errorf("commit: table %s: %w", identString(ident), err)
	}
	if c.remote == nil {
		return c.StageMetadata(ctx, ident, baseLoc, final, false)
	}
	ident, err = Normalize(ident)
	if err != nil {
		return nil, err
	}
	return &StagedCommit{Ident: ident, Base: base, Metadata: final,
		remote: &remoteCommit{reqs: unchangedSince(base), updates: updates}}, nil
}

// unchangedSince are the requirements that a table still is as base left
// it, in what a transaction's writes depend on.
func unchangedSince(base table.Metadata) []table.Requirement {
	var snap *int64
	if s := base.CurrentSnapshot(); s != nil {
		id := s.SnapshotID
		snap = &id
	}
	return []table.Requirement{
		table.AssertTableUUID(base.TableUUID()),
		table.AssertRefSnapshotID(table.MainBranch, snap),
		table.AssertCurrentSchemaID(base.CurrentSchema().ID),
		table.AssertDefaultSpecID(base.DefaultPartitionSpec()),
		table.AssertDefaultSortOrderID(base.DefaultSortOrder()),
		table.AssertLastAssignedFieldID(base.LastColumnID()),
	}
}

// createChanges are the updates that build meta from nothing, for a
// table created inside a transaction (the REST spec's staged create).
func createChanges(meta table.Metadata) []table.Update {
	spec := meta.PartitionSpec()
	order := meta.SortOrder()
	ups := []table.Update{
		table.NewAssignUUIDUpdate(meta.TableUUID()),
		table.NewUpgradeFormatVersionUpdate(meta.Version()),
		table.NewAddSchemaUpdate(meta.CurrentSchema()),
		table.NewSetCurrentSchemaUpdate(-1),
		table.NewAddPartitionSpecUpdate(&spec, true),
		table.NewSetDefaultSpecUpdate(-1),
		table.NewAddSortOrderUpdate(&order),
		table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate(meta.Location()),
	}
	if props := meta.Properties(); len(props) > 0 {
		ups = append(ups, table.NewSetPropertiesUpdate(props))
	}
	for _, s := range meta.Snapshots() {
		ups = append(ups, table.NewAddSnapshotUpdate(&s))
	}
	if cur := meta.CurrentSnapshot(); cur != nil {
		ups = append(ups, table.NewSetSnapshotRefUpdate(table.MainBranch, cur.SnapshotID, table.BranchRef, -1, -1, -1))
	}
	return ups
}

func (c *Catalog) stageRemote(ident table.Identifier, meta table.Metadata, created bool) (*StagedCommit, error) {
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, fmt.Errorf("stage metadata for %s: %w", identString(ident), errRemote("replacing a table's metadata whole"))
	}
	return &StagedCommit{Ident: ident, Metadata: meta,
		remote: &remoteCommit{reqs: []table.Requirement{table.AssertCreate()}, updates: createChanges(meta)}}, nil
}

// publishRemote sends staged changes as one REST commit.
func (c *Catalog) publishRemote(ctx context.Context, staged []*StagedCommit) error {
	var commits []table.TableCommit
	var drops []*StagedCommit
	seen := map[string]bool{}
	for _, s := range staged {
		key := identString(s.Ident)
		if seen[key] {
			return errRemote(fmt.Sprintf("table %s: replacing a table inside a transaction", key))
		}
		seen[key] = true
		switch {
		case s.remote == nil && s.Swap.New == "" && s.Swap.Expected != "":
			drops = append(drops, s)
		case s.remote == nil:
			// a table read and asserted unchanged (a clone's source)
			return errRemote(fmt.Sprintf("table %s: asserting a table unchanged by its metadata file", key))
		default:
			commits = append(commits, table.TableCommit{Identifier: s.Ident, Requirements: s.remote.reqs, Updates: s.remote.updates})
		}
	}
	if len(drops) > 0 {
		if len(staged) > 1 {
			return errRemote("a transaction that drops a table and changes others (REST catalogs drop tables one at a time, outside transactions)")
		}
		return c.remote.DropTable(ctx, drops[0].Ident)
	}
	var err error
	if len(commits) == 1 {
		_, _, err = c.remote.CommitTable(ctx, commits[0].Identifier, commits[0].Requirements, commits[0].Updates)
	} else {
		err = c.remote.CommitTransaction(ctx, commits)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, table.ErrCommitFailed), errors.Is(err, icecatalog.ErrTableAlreadyExists):
		return &ConflictError{Ident: commits[0].Identifier, Expected: "the version this write read", Found: "a newer one (" + err.Error() + ")"}
	case errors.Is(err, icerest.ErrCommitStateUnknown):
		return fmt.Errorf("%w: %w", ErrCommitStateUnknown, err)
	}
	return err
}

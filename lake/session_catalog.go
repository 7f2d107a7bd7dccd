package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// sessionCatalog resolves names for the planner: registered sources
// first, then tables.
//
// Transactions plug in here: a session inside BEGIN resolves a table
// through its transaction's staged metadata (created, replaced and
// written tables) before the lake's committed catalog, so its statements
// see their own uncommitted writes. Until then every lookup reads the
// committed catalog.
type sessionCatalog struct {
	s *Session
}

var _ plan.Catalog = sessionCatalog{}

func (c sessionCatalog) LookupSource(name string) plan.Source {
	if src, ok := c.s.sources[strings.ToLower(name)]; ok {
		return src
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(name), "pg_temp."); ok {
		if t, ok := c.s.temps[rest]; ok {
			return t
		}
	}
	if strings.EqualFold(name, "csv_rejects") {
		return c.s.rejectsSource()
	}
	if sys := c.lookupSystem(name); sys != nil {
		return sys
	}
	return nil
}

// LookupTable resolves a table name, and Spark's branch and tag names:
// t.branch_audit reads and writes t's branch audit, t.tag_v1 reads its tag
// v1 (a table of that name comes first). Under SET write_branch, a table
// that has that branch is read and written on it.
func (c sessionCatalog) LookupTable(ctx context.Context, parts []string) (*plan.TableRef, error) {
	if len(parts) <= 2 {
		n := make(parser.Name, len(parts))
		for i, p := range parts {
			n[i] = parser.Ident{Name: p}
		}
		if _, ok := c.s.temps[tempName(n)]; ok {
			// reads find it as a source first; this is a write
			return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("%s is a temporary table, which skade keeps read only (the rows of its CREATE TEMPORARY TABLE … AS); write into a table of the lake, or create the temporary table again", strings.Join(parts, "."))}
		}
	}
	ref, err := c.lookupTable(ctx, parts)
	if err == nil {
		if wb := c.s.writeBranch(); wb != "" && wb != table.MainBranch {
			if _, rerr := snapshot.Ref(ref.Table.Metadata(), ref.Name, wb); rerr == nil {
				return c.onRef(ref, wb, ref.Name)
			}
		}
		return ref, nil
	}
	if len(parts) < 2 {
		return nil, err
	}
	last := parts[len(parts)-1]
	var name string
	for _, prefix := range []string{"branch_", "tag_"} {
		if len(last) > len(prefix) && strings.EqualFold(last[:len(prefix)], prefix) {
			name = last[len(prefix):]
		}
	}
	if name == "" {
		return nil, err
	}
	base, berr := c.lookupTable(ctx, parts[:len(parts)-1])
	if berr != nil {
		return nil, err
	}
	r, rerr := c.onRef(base, name, base.Name+"."+last)
	if rerr != nil {
		return nil, rerr
	}
	if kind := strings.ToLower(last[:strings.IndexByte(last, '_')]); (kind == "tag") != (r.Tag != "") {
		is := "branch"
		if r.Tag != "" {
			is = "tag"
		}
		return nil, &sentinelError{ErrRefNotFound, fmt.Errorf("table %s has no %s %q: %q is a %s; write %s.%s_%s", base.Name, kind, name, name, is, base.Name, is, name)}
	}
	return r, nil
}

// onRef is ref read through its branch or tag name, under display name
// shown.
func (c sessionCatalog) onRef(ref *plan.TableRef, name, shown string) (*plan.TableRef, error) {
	if name == table.MainBranch {
		return &plan.TableRef{Name: ref.Name, Ident: ref.Ident, Table: ref.Table}, nil
	}
	view, r, err := snapshot.OnRef(ref.Table, ref.Name, name)
	if err != nil {
		return nil, err
	}
	out := &plan.TableRef{Name: shown, Ident: ref.Ident, Table: view}
	if r.SnapshotRefType == table.TagRef {
		out.Tag = name
	} else {
		out.Branch = name
	}
	return out, nil
}

func (c sessionCatalog) lookupTable(ctx context.Context, parts []string) (*plan.TableRef, error) {
	id, err := catalog.Normalize(parts)
	if err != nil {
		return nil, translate(err)
	}
	var tbl *table.Table
	if c.s.tx != nil {
		tbl, err = c.s.tx.lookup(ctx, id)
	} else {
		tbl, err = c.s.lk.load(ctx, id)
	}
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			msg := fmt.Sprintf("table %q does not exist", strings.Join(parts, "."))
			if names, lerr := c.s.tableNames(ctx); lerr == nil {
				var cands []string
				for _, n := range names {
					if strings.HasPrefix(n, catalog.DefaultNamespace+".") && len(parts) == 1 {
						n = strings.TrimPrefix(n, catalog.DefaultNamespace+".")
					}
					cands = append(cands, n)
				}
				for name := range c.s.sources {
					cands = append(cands, name)
				}
				msg += plan.DidYouMean(strings.Join(parts, "."), cands)
			}
			return nil, &sentinelError{ErrTableNotFound, errors.New(msg)}
		}
		return nil, err
	}
	return &plan.TableRef{Name: displayName(id), Ident: id, Table: tbl}, nil
}

// csvRejectsSchema is the relation csv_rejects: the rows the session's
// latest read_csv(…, ignore_errors = true) skipped.
var csvRejectsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file", Type: arrow.BinaryTypes.String},
	{Name: "line", Type: arrow.PrimitiveTypes.Int64},
	{Name: "column_name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "error", Type: arrow.BinaryTypes.String},
}, nil)

// rejectsSource is csv_rejects as it stands now.
func (s *Session) rejectsSource() plan.Source {
	b := array.NewRecordBuilder(memory.DefaultAllocator, csvRejectsSchema)
	defer b.Release()
	for _, r := range s.rejects.Rows() {
		b.Field(0).(*array.StringBuilder).Append(r.File)
		b.Field(1).(*array.Int64Builder).Append(int64(r.Line))
		for i, v := range []string{r.Column, r.Value} {
			if v == "" {
				b.Field(2 + i).AppendNull()
			} else {
				b.Field(2 + i).(*array.StringBuilder).Append(v)
			}
		}
		b.Field(4).(*array.StringBuilder).Append(r.Error)
	}
	return &batchSource{batch: b.NewRecordBatch()}
}

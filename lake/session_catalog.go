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
	"github.com/skadedb/skade/plan"
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
	if strings.EqualFold(name, "csv_rejects") {
		return c.s.rejectsSource()
	}
	if sys := c.lookupSystem(name); sys != nil {
		return sys
	}
	return nil
}

func (c sessionCatalog) LookupTable(ctx context.Context, parts []string) (*plan.TableRef, error) {
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

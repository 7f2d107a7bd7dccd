package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

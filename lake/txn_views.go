package lake

import (
	"context"
	"errors"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// txView is one view as a transaction sees it: pinned at its committed
// state when first touched, then created, replaced or dropped in the
// transaction. COMMIT moves its pointer with the tables' in one
// catalog.Publish; ROLLBACK removes the metadata files it wrote.
type txView struct {
	id table.Identifier
	// base is the committed view when first touched; nil when none.
	base *catalog.View
	// cur is the view now; nil when it does not exist.
	cur *catalog.View
	// written are the metadata files staged for it, each with its discard.
	written []stagedView
}

type stagedView struct {
	loc     string
	discard func()
}

// view returns the transaction's state of view id, pinning it on first
// touch.
func (tx *txn) view(ctx context.Context, id table.Identifier) (*txView, error) {
	if tx.views == nil {
		tx.views = map[string]*txView{}
	}
	key := txKey(id)
	if v, ok := tx.views[key]; ok {
		return v, nil
	}
	base, err := tx.s.lk.cat.LoadView(ctx, id)
	if errors.Is(err, catalog.ErrViewNotFound) {
		base, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := &txView{id: id, base: base, cur: base}
	tx.views[key] = v
	tx.viewOrder = append(tx.viewOrder, v)
	return v, nil
}

// stageView makes view id's next state the query sql with schema: a new
// metadata file no pointer names until COMMIT.
func (tx *txn) stageView(ctx context.Context, v *txView, sql string, schema *iceberg.Schema) error {
	nv, discard, err := tx.s.lk.cat.StageView(ctx, v.id, sql, viewDialect, schema, v.cur)
	if err != nil {
		return err
	}
	v.written = append(v.written, stagedView{loc: nv.MetadataLocation, discard: discard})
	v.cur = nv
	return nil
}

// viewCommits are the pointer swaps of the views the transaction changed.
func (tx *txn) viewCommits() []*catalog.StagedCommit {
	var out []*catalog.StagedCommit
	for _, v := range tx.viewOrder {
		before, after := "", ""
		if v.base != nil {
			before = v.base.MetadataLocation
		}
		if v.cur != nil {
			after = v.cur.MetadataLocation
		}
		if before != after {
			out = append(out, catalog.ViewSwap(v.id, before, after))
		}
	}
	return out
}

// viewsPublished tidies after COMMIT: the versions staged and superseded
// inside the transaction go, and so do the directories of dropped views.
func (tx *txn) viewsPublished() {
	for _, v := range tx.viewOrder {
		if v.cur == nil && v.base == nil {
			// created and dropped: its files and directory go
			for i := len(v.written) - 1; i >= 0; i-- {
				v.written[i].discard()
			}
			continue
		}
		for _, w := range v.written {
			if v.cur == nil || w.loc != v.cur.MetadataLocation {
				_ = tx.s.lk.cat.FS().Remove(w.loc)
			}
		}
		if v.cur == nil && v.base != nil {
			loc := v.base.MetadataLocation
			if i := strings.LastIndex(loc, "/metadata/"); i > 0 {
				_ = tx.s.lk.cat.FS().RemoveAll(loc[:i])
			}
		}
	}
	tx.views, tx.viewOrder = nil, nil
}

// viewsRolledBack removes every view metadata file the transaction wrote.
func (tx *txn) viewsRolledBack() {
	for _, v := range tx.viewOrder {
		for i := len(v.written) - 1; i >= 0; i-- {
			v.written[i].discard()
		}
	}
	tx.views, tx.viewOrder = nil, nil
}

package scan

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Plain reads for queries. A query's scan that applies no row filter
// itself (none, or one only for pruning: plainprune.go), reading only
// fixed-width, STRING and BINARY columns, reads a file whose chunks
// of those columns qualify (plainColumns: PLAIN pages, or
// dictionary-encoded ones for strings; NULLs taken, plainnulls.go) here,
// page by page (plain.go),
// rather than through iceberg-go's scan: each page is
// decompressed straight into the batch that returns it. Measured on
// `SELECT count(*), sum(amount)` over 10M rows, that took the scan from
// about DuckDB's time to well under it (BENCHMARKS.md, session 38);
// through arrow-go's page reader, session 34's plain reads were no faster
// than iceberg-go's scan. Anything else, and any row group whose pages
// turn out otherwise, is read as before. A split is read as iceberg-go
// reads it: the row groups whose split offset lies in its range.

// TestPlainQueryOff, when set (by tests only), sends every query's file
// through iceberg-go's scan, for a test to compare the two.
var TestPlainQueryOff atomic.Bool

// TestHookPlainPruned, when set (by tests only), is called with the rows
// of each row group a query's plain read leaves unread by its statistics.
var TestHookPlainPruned func(rows int64)

// plainQuery is a query's scan compiled for plain reads: the columns
// read, as the batches name them, and their field ids.
type plainQuery struct {
	schema *arrow.Schema
	ids    []int
	rows   int // batch rows
	// prune, when not nil, rules row groups out by their statistics
	// (plainprune.go)
	prune *groupPruner
	// dict marks the string columns whose batches may come as
	// dictionary arrays (ReadSpec.Dict); nil for none
	dict []bool
}

// compilePlainQuery is names (the columns a scan reads) of schema for
// plain reads; nil unless every one is a primitive
// field a plain read takes (plain.go's plainType).
func compilePlainQuery(schema *iceberg.Schema, names []string, rows int, dict []string) *plainQuery {
	if schema == nil || len(names) == 0 || TestPlainQueryOff.Load() {
		return nil
	}
	pq := &plainQuery{ids: make([]int, len(names)), rows: rows}
	fields := make([]arrow.Field, len(names))
	for i, name := range names {
		f, ok := schema.FindFieldByName(name)
		if !ok || f.ID >= reservedFieldIDs {
			return nil
		}
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
			return nil
		}
		t, err := table.TypeToArrowType(f.Type, false, false)
		if err != nil || !plainType(t) {
			return nil
		}
		fields[i] = arrow.Field{Name: name, Type: t, Nullable: true}
		pq.ids[i] = f.ID
		if slices.Contains(dict, name) && (t.ID() == arrow.STRING || t.ID() == arrow.BINARY) {
			if pq.dict == nil {
				pq.dict = make([]bool, len(names))
			}
			pq.dict[i] = true
		}
	}
	pq.schema = arrow.NewSchema(fields, nil)
	return pq
}

// plainBatchMost is how many batches' rows one page of more rows than a
// batch may make a batch of its own in a query's plain read.
const plainBatchMost = 4

// readPlainQuery reads f's tasks page by page, calling emit with each
// batch (the columns read, named as the scan names them) and whether it
// is the read's alone (owned: no other array shares its buffers); handled is
// false, with nothing emitted, where the file does not qualify and the
// caller reads it through iceberg-go's scan.
func readPlainQuery(ctx context.Context, f *fileRead, emit func(rec arrow.RecordBatch, owned bool) bool) (handled bool, err error) {
	pq := f.plain
	tasks := f.tasks()
	of := openTaskFile(ctx, f, tasks)
	if of == nil {
		return false, nil
	}
	defer of.close()
	meta := of.pr.MetaData()
	cols := plainColumns(meta, pq.schema, pq.ids, f.task.File.Count(), true)
	if cols == nil {
		return false, nil
	}
	for i, d := range pq.dict {
		cols[i].dict = d
	}
	groups := taskGroups(meta, tasks, of.size)
	if groups == nil {
		return false, nil
	}
	var failed error
	yielder := func(owned bool) func(arrow.RecordBatch, error) bool {
		return func(b arrow.RecordBatch, err error) bool {
			if err != nil {
				failed = err
				return false
			}
			return emit(b, owned)
		}
	}
	// a page-by-page batch is this read's alone; one of pqarrow's may
	// share its buffers with the record it was cut from
	paged, fellBack := yielder(true), yielder(false)
	size := int64(max(pq.rows, 1))
	p := newPlainFile(of.pr, of.src, of.size, pq.schema, cols)
	// an ORDER BY … LIMIT's bound: best row groups first, those that
	// cannot enter left out (topbound.go); a file whose deletes are
	// applied here comes whole and in order
	top := f.top
	if f.deletes != nil {
		top = nil
	}
	if top != nil {
		groups = top.orderGroups(meta, groups, top.nanFirst(f.task.File))
	}
	for _, g := range groups {
		if !pq.prune.mayMatch(meta, g, f.task.File.NaNValueCounts()) {
			if f.pruned != nil {
				f.pruned.Add(1)
			}
			if TestHookPlainPruned != nil {
				TestHookPlainPruned(meta.RowGroup(g).NumRows())
			}
			continue
		}
		if top.skipsGroup(meta, g, top.nanFirst(f.task.File)) {
			if f.topGroups != nil {
				f.topGroups.Add(1)
			}
			continue
		}
		// a page of more rows than a batch's makes a batch of its own (up
		// to plainBatchMost batches' rows), decompressed into it in place
		more := p.readGroup(ctx, g, size, plainBatchMost*size, ReadBuffers, paged, fellBack)
		if failed != nil {
			return true, fmt.Errorf("file %s: %w", f.task.File.FilePath(), failed)
		}
		if !more {
			return true, nil
		}
	}
	return true, nil
}

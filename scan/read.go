package scan

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ReadSpec is what OpenFiles needs to read a scan's planned files.
type ReadSpec struct {
	// Name is the table's display name, for messages.
	Name  string
	Table *table.Table
	// Scan reads the files with the query's filter and iceberg-go's own
	// delete handling; Fields are the columns it selects.
	Scan   *table.Scan
	Fields []string
	// Schema is the Iceberg schema the scan reads with; SnapshotOpts pin
	// the snapshot (nil for a live scan of the head).
	Schema       *iceberg.Schema
	SnapshotOpts []table.ScanOption
	Mem          memory.Allocator
	// TimeFilter are the timestamp columns (field ids) Scan's row filter
	// compares (ReadFilterTimestamps): see ReadTasksFiltered.
	TimeFilter []int
	// Conform turns a batch read into the caller's output schema.
	Conform func(context.Context, arrow.RecordBatch) (arrow.RecordBatch, error)
	// Filter is the scan's pruning filter (what Scan's row filter is
	// ReadFilter's part of), when the caller's own predicate above the
	// scan gives the exact answer: files it tests by string columns alone
	// may then be read filtered by dictionary (dictread.go). nil reads
	// every file through Scan.
	Filter iceberg.BooleanExpression
	// Exact, when not nil, is a filter of predicates on string columns
	// that the caller has no Filter above the scan for: every batch must
	// hold only rows that pass it. A file read by dictionary evaluates it
	// exactly there, ANDed with Filter (of which it is part, but for <>,
	// NOT IN and LIKE prefixes, which are not used for pruning); a batch
	// read any other way is filtered by it before Conform. FilterOnly are the columns of Fields
	// read for Exact alone, which Conform drops; a file read by dictionary
	// does not make them.
	Exact      iceberg.BooleanExpression
	FilterOnly []string
	// ScanRows, when not nil, makes Scan with batches of rows rows: a
	// file Scan reads whose string columns would make its batches hold
	// more than about plainStringBatch bytes is read with fewer rows a
	// batch (fileRead.wideRows).
	ScanRows func(rows int) *table.Scan
	// Dict are string columns of Fields that a file read page by page
	// may return as dictionary arrays (Int32 indices into a dictionary of
	// the field's type), batch by batch, where the file stores them
	// dictionary-encoded: a caller that asks must take them either way.
	// Conform sees such batches as they are.
	Dict []string
	// Top, when not nil, is an ORDER BY … LIMIT's bound on one column:
	// files are read best bounds first, and a file none of whose rows can
	// enter the top-N is left unread (topbound.go).
	Top *TopBound
	// CountOnly: the caller reads no value of Fields, only how many rows
	// each batch holds. A file read by dictionary then returns the
	// columns it does not test as NULLs, unread (dictread.go).
	CountOnly bool
}

// Reader reads a scan's files concurrently and hands their batches out in
// plan order, each file's deletes applied: by iceberg-go, or, for files
// with position or equality deletes the delete index can apply, here, on
// the file read whole and unfiltered (deletes.go).
type Reader struct {
	r   *fileReader
	raw *table.Scan // the scan of the files whose deletes are applied here
}

// OpenFiles starts reading tasks, in order.
func OpenFiles(ctx context.Context, spec ReadSpec, tasks []table.FileScanTask) (*Reader, error) {
	if spec.Top != nil {
		tasks = slices.Clone(tasks)
		spec.Top.order(tasks)
	}
	files := make([]fileRead, len(tasks))
	// scanOf is a scan of the snapshot's columns fields, without a row
	// filter, in batches as batch says
	scanOf := func(fields []string, batch ...table.ScanOption) *table.Scan {
		return spec.Table.Scan(append(append(slices.Clone(spec.SnapshotOpts), batch...), table.WithSelectedFields(fields...))...)
	}
	alt := func(fields []string) *table.Scan { return scanOf(fields, BatchOpts(spec.Table)...) }
	var exact *exactFilter
	if spec.Exact != nil {
		var err error
		if exact, err = compileExact(spec.Exact, spec.Schema); err != nil {
			return nil, fmt.Errorf("scan %s: %w", spec.Name, err)
		}
	}
	var wide []int // the string columns read, by field id
	if spec.ScanRows != nil && spec.Schema != nil {
		for _, name := range spec.Fields {
			if f, ok := spec.Schema.FindFieldByName(name); ok && (f.Type.Equals(iceberg.PrimitiveTypes.String) || f.Type.Equals(iceberg.PrimitiveTypes.Binary)) {
				wide = append(wide, f.ID)
			}
		}
	}
	for i, t := range tasks {
		files[i] = fileRead{task: t, scan: spec.Scan, tbl: spec.Table, alt: alt, timeIDs: spec.TimeFilter, conform: spec.Conform, exact: exact, top: spec.Top}
		if len(wide) > 0 {
			files[i].scanRows, files[i].wide = spec.ScanRows, wide
		}
	}
	var idx *deleteIndex
	for i, t := range tasks {
		if !HasDeletes(t) {
			continue
		}
		if idx == nil {
			fs, err := spec.Table.FS(ctx)
			if err != nil {
				return nil, fmt.Errorf("scan %s: %w", spec.Name, err)
			}
			idx = newDeleteIndex(fs, spec.Mem, spec.Schema, func(names []string, batch int) *table.Scan {
				return scanOf(names, table.WithArrowBatchSize(batch))
			})
		}
		if idx.accept(t) {
			files[i].deletes = idx
		}
	}
	rd := &Reader{}
	var rawFields []string
	if idx != nil {
		// INVARIANT (deleteIndex): the raw scan has no row filter, so a
		// file comes whole and in order; it also reads the equality key
		// columns.
		raw := spec.Fields
		for _, c := range idx.eqColumns() {
			if !slices.Contains(raw, c) {
				raw = append(raw[:len(raw):len(raw)], c)
			}
		}
		rd.raw = alt(raw)
		rawFields = raw
		rawRows := func(rows int) *table.Scan { return scanOf(raw, table.WithArrowBatchSize(rows)) }
		for i := range files {
			if files[i].deletes != nil {
				files[i].scan, files[i].timeIDs = rd.raw, nil // no filter
				if files[i].scanRows != nil {
					files[i].scanRows = rawRows
				}
				files[i].task.DeleteFiles, files[i].task.EqualityDeleteFiles, files[i].task.DeletionVectorFiles, files[i].task.Residual = nil, nil, nil, nil
				files[i].deletesOf = tasks[i]
			}
		}
	}
	out := spec.Fields // the columns a file read by dictionary makes
	if len(spec.FilterOnly) > 0 {
		out = slices.DeleteFunc(slices.Clone(out), func(f string) bool { return slices.Contains(spec.FilterOnly, f) })
	}
	rf := spec.Filter
	if spec.Exact != nil {
		// evaluated exactly by a read by dictionary, as compileExact
		// evaluates it
		rf = spec.Exact
		if spec.Filter != nil {
			rf = iceberg.NewAnd(spec.Filter, spec.Exact)
		}
	}
	if df := compileDictFilter(rf, spec.Schema, out); df != nil && !TestDictReadOff.Load() {
		df.prune = compileGroupPruner(rf, spec.Schema)
		df.countOnly = spec.CountOnly
		for i := range files {
			if files[i].deletes == nil {
				files[i].dict = df
			}
		}
	}
	if spec.Exact == nil {
		// no row filter the scan must apply exactly: Filter (ReadScan's
		// row filter) is for pruning, and the predicate above the scan
		// drops the rows of the row groups read that fail it
		// (plainprune.go)
		rows := queryBatchRows(spec.Table)
		pq := compilePlainQuery(spec.Schema, spec.Fields, rows, spec.Dict)
		if pq != nil && spec.Filter != nil {
			pq.prune = compileGroupPruner(spec.Filter, spec.Schema)
		}
		// the raw scan's files come whole and in order, as their
		// deletes need: no row group left out
		var raw *plainQuery
		if rd.raw != nil {
			raw = compilePlainQuery(spec.Schema, rawFields, rows, spec.Dict)
		}
		for i := range files {
			if files[i].deletes == nil {
				files[i].plain = pq
			} else {
				files[i].plain = raw
			}
		}
	}
	groupSplits(files, runtime.GOMAXPROCS(0))
	rd.r = startFileReader(ctx, files)
	return rd, nil
}

// TopSkipped is how many files (or ranges) the scan left unread by its
// Top bound.
func (rd *Reader) TopSkipped() int64 { return rd.r.topSkipped.Load() }

// TopGroupsSkipped is how many row groups of the files read the scan
// left unread by its Top bound.
func (rd *Reader) TopGroupsSkipped() int64 { return rd.r.topGroups.Load() }

// GroupsPruned is how many row groups of the files read the scan left
// unread by their statistics (plainprune.go).
func (rd *Reader) GroupsPruned() int64 { return rd.r.pruned.Load() }

// Next returns the next batch (the caller owns it), or with fileDone set
// and no batch, that a file has ended; a nil batch and false when every
// file has.
func (rd *Reader) Next(ctx context.Context) (rec arrow.RecordBatch, fileDone bool, err error) {
	return rd.r.next(ctx)
}

// Close stops the reads and releases what was read but not taken. It is
// safe to call twice.
func (rd *Reader) Close() error {
	rd.r.close()
	if rd.raw != nil {
		err := rd.raw.Close()
		rd.raw = nil
		return err
	}
	return nil
}

package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/scan"
)

// TableScan reads an Iceberg table at one snapshot through iceberg-go,
// projected onto some fields and pruned by a row filter.
//
// The filter is for pruning: iceberg-go skips data files (and row groups)
// whose partition values or column min/max rule it out, and drops rows
// that fail it. The planner keeps its own Filter above the scan, so a
// filter here must only ever be implied by the query's predicate; the
// exception is the part set by SetExact, which the scan applies exactly
// and no Filter above tests.
//
// Position and equality deletes are applied by scan.OpenFiles (each delete
// file read once per scan, see scan/deletes.go); deletion vectors and split
// files are left to iceberg-go. Files are read concurrently and returned in
// plan order (scan/file_reader.go).
//
// Metrics: files_scanned is the number of data files planned,
// ranges_scanned the ranges of row groups they were planned as (a large
// file is several, read side by side), files_skipped the data files of
// the snapshot that pruning left out, files_read the data files read to
// their end. A Progress in Open's
// context hears of the planned files, each file read and each batch's rows.
type TableScan struct {
	name   string
	tbl    *table.Table
	snapID int64 // 0 with noSnap: the table has no snapshot, so no rows
	noSnap bool
	fields []string
	filter iceberg.BooleanExpression
	// exact, when not nil, is applied to every row (SetExact); filterOnly
	// are the columns read for it alone
	exact      iceberg.BooleanExpression
	filterOnly []string
	// dict are columns (Iceberg names) that may come as dictionary
	// arrays (SetDictionary)
	dict []string
	// top, when not nil, is an ORDER BY … LIMIT's bound (SetTopBound)
	top *scan.TopBound
	// countOnly: no value is read above, only rows (SetCountOnly)
	countOnly bool
	schema    *arrow.Schema
	mem       memory.Allocator

	// tasks, when preset, are read instead of planning (a DML statement
	// rewriting one file at a time).
	tasks  []table.FileScanTask
	preset bool

	metrics  Metrics
	progress *Progress
	scan     *table.Scan // the files read by iceberg-go, filtered
	reader   *scan.Reader
	done     bool
}

var _ Operator = (*TableScan)(nil)

// NewTableScan scans tbl at snapshot snap (nil for a table never written)
// reading fields, whose Arrow types make schema (canonical types: the scan
// casts what iceberg-go returns when it differs). filter may be nil.
func NewTableScan(name string, tbl *table.Table, snap *table.Snapshot, fields []string, schema *arrow.Schema, filter iceberg.BooleanExpression) (*TableScan, error) {
	if tbl == nil || schema == nil {
		return nil, fmt.Errorf("exec: table scan: nil table or schema (planner bug)")
	}
	if len(fields) == 0 || len(fields) != schema.NumFields() {
		return nil, fmt.Errorf("exec: table scan: %d fields but a schema of %d (planner bug)", len(fields), schema.NumFields())
	}
	s := &TableScan{name: name, tbl: tbl, fields: fields, schema: schema, filter: filter, mem: memory.DefaultAllocator}
	if snap == nil {
		s.noSnap = true
	} else {
		s.snapID = snap.SnapshotID
	}
	return s, nil
}

func (s *TableScan) Schema() *arrow.Schema { return s.schema }
func (s *TableScan) Children() []Operator  { return nil }
func (s *TableScan) Metrics() *Metrics     { return &s.metrics }

func (s *TableScan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TableScan %s", s.name)
	if !s.noSnap {
		fmt.Fprintf(&b, "@%d", s.snapID)
	}
	fmt.Fprintf(&b, " [%s]", strings.Join(s.fields, ", "))
	if s.filter != nil {
		fmt.Fprintf(&b, " filter=%s", s.filter)
	}
	if len(s.dict) > 0 {
		fmt.Fprintf(&b, " dictionary=[%s]", strings.Join(s.dict, ", "))
	}
	if s.exact != nil {
		fmt.Fprintf(&b, " exact=%s", s.exact)
		if len(s.filterOnly) > 0 {
			fmt.Fprintf(&b, " reading [%s]", strings.Join(s.filterOnly, ", "))
		}
	}
	return b.String()
}

// SetTopBound makes the scan read its files best bounds first and leave
// out those none of whose rows can enter the top-N that sets tb
// (scan.TopBound). EXPLAIN ANALYZE counts them (topn_ranges_skipped).
func (s *TableScan) SetTopBound(tb *scan.TopBound) { s.top = tb }

// SetCountOnly tells the scan that no operator above reads its columns'
// values, only its rows: a file read by dictionary may then return them
// as NULLs instead of reading them (scan.ReadSpec.CountOnly).
func (s *TableScan) SetCountOnly(on bool) { s.countOnly = on }

// TopBoundColumn is the scan's column i as a top-N bound's field: ok is
// false unless it is an INT, BIGINT, DATE or microsecond TIMESTAMP column
// of the table's schema.
func (s *TableScan) TopBoundColumn(i int) (tb *scan.TopBound, ok bool) {
	if i < 0 || i >= len(s.fields) {
		return nil, false
	}
	if s.noSnap {
		return nil, false
	}
	f, found := s.query().Schema().FindFieldByName(s.fields[i])
	if !found {
		return nil, false
	}
	switch t := s.schema.Field(i).Type.(type) {
	case *arrow.Int32Type, *arrow.Date32Type:
		if !f.Type.Equals(iceberg.PrimitiveTypes.Int32) && !f.Type.Equals(iceberg.PrimitiveTypes.Date) {
			return nil, false
		}
		return &scan.TopBound{FieldID: f.ID, Type: f.Type}, true
	case *arrow.Int64Type:
		if !f.Type.Equals(iceberg.PrimitiveTypes.Int64) {
			return nil, false
		}
		return &scan.TopBound{FieldID: f.ID, Type: f.Type, Wide: true}, true
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond || !f.Type.Equals(iceberg.PrimitiveTypes.Timestamp) && !f.Type.Equals(iceberg.PrimitiveTypes.TimestampTz) {
			return nil, false
		}
		return &scan.TopBound{FieldID: f.ID, Type: f.Type, Wide: true}, true
	case *arrow.Float64Type:
		if !f.Type.Equals(iceberg.PrimitiveTypes.Float64) {
			return nil, false
		}
		return &scan.TopBound{FieldID: f.ID, Type: f.Type, Wide: true, Float: true}, true
	case *arrow.Float32Type:
		if !f.Type.Equals(iceberg.PrimitiveTypes.Float32) {
			return nil, false
		}
		return &scan.TopBound{FieldID: f.ID, Type: f.Type, Float: true}, true
	}
	return nil, false
}

// SetExact makes the scan return only rows that pass exact, a filter of
// predicates on string columns that mean what SQL's do, for a planner
// that keeps no Filter above the scan for them; filterOnly are columns
// (Iceberg names) that exact tests and the scan does not return. exact
// must also be part of the pruning filter.
func (s *TableScan) SetExact(exact iceberg.BooleanExpression, filterOnly []string) {
	s.exact, s.filterOnly = exact, filterOnly
}

// SetDictionary lets the scan return the string columns cols (Iceberg
// names, among its fields) as dictionary arrays of their type, with Int32
// indices, in any batch read page by page from a file that stores them
// dictionary-encoded (scan.ReadSpec.Dict). A batch with such a column has
// a schema of its own, that column's field typed as the dictionary; the
// operator's Schema stays the columns' own types. Only a consumer that
// takes both forms may ask: a HashAggregate grouping by the column alone.
func (s *TableScan) SetDictionary(cols []string) { s.dict = cols }

// NewFileScan is a TableScan of the given planned files only; filter,
// when not nil, still prunes row groups inside them.
func NewFileScan(name string, tbl *table.Table, snap *table.Snapshot, fields []string, schema *arrow.Schema, filter iceberg.BooleanExpression, tasks []table.FileScanTask) (*TableScan, error) {
	s, err := NewTableScan(name, tbl, snap, fields, schema, filter)
	if err != nil {
		return nil, err
	}
	s.tasks, s.preset = tasks, true
	return s, nil
}

// Open plans the files to read and starts reading them. Planning reads
// manifests only.
func (s *TableScan) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { s.metrics.Elapsed.Add(int64(time.Since(start))) }()
	if err := s.Close(); err != nil { // a scan opened again starts over
		return fmt.Errorf("scan %s: %w", s.name, err)
	}
	s.done = false
	s.progress = ProgressFrom(ctx)
	s.metrics.Set("files_read", 0)
	if s.noSnap {
		s.done = true
		s.metrics.Set("files_scanned", 0)
		s.metrics.Set("files_skipped", 0)
		return nil
	}
	q := s.query()
	tasks := s.tasks
	if !s.preset {
		// Files are planned with PlanFilter's part of the filter, rows
		// read with ReadFilter's: each is what is sound there.
		var err error
		if tasks, err = q.Plan(ctx); err != nil {
			return fmt.Errorf("scan %s: %w", s.name, err)
		}
	}
	// files, not tasks: a large file is planned as several splits
	nfiles := scan.DistinctFiles(tasks)
	s.metrics.Set("files_scanned", nfiles)
	s.metrics.Set("ranges_scanned", int64(len(tasks)))
	if total := scan.SnapshotDataFiles(s.tbl, s.snapID); !s.preset && total >= nfiles {
		// a preset scan is one part of a split scan: the planner reports
		// what pruning skipped for the whole
		s.metrics.Set("files_skipped", total-nfiles)
	}
	s.progress.Planned(nfiles)
	s.progress.PlannedRows(scan.DistinctRows(tasks))
	if len(tasks) == 0 {
		s.done = true
		return nil
	}
	sc, read, tasks := q.ReadScan(tasks)
	s.scan = sc
	rd, err := scan.OpenFiles(ctx, scan.ReadSpec{
		Name: s.name, Table: s.tbl, Scan: s.scan, Schema: q.Schema(), SnapshotOpts: q.SnapshotOpts(),
		Fields: read, Mem: s.mem, Conform: s.conform, TimeFilter: scan.ReadFilterTimestamps(s.filter, q.Schema()),
		Filter: s.filter, Exact: s.exact, FilterOnly: s.filterOnly, Dict: s.dict, Top: s.top, CountOnly: s.countOnly,
		ScanRows: func(rows int) *table.Scan { return q.ReadScanRows(read, rows) },
	}, tasks)
	if err != nil {
		s.scan.Close()
		s.scan = nil
		return err
	}
	s.reader = rd
	return nil
}

// query is the scan's file planning and read options (package scan).
func (s *TableScan) query() scan.Query {
	fields := s.fields
	if len(s.filterOnly) > 0 {
		fields = append(fields[:len(fields):len(fields)], s.filterOnly...)
	}
	return scan.Query{Table: s.tbl, SnapID: s.snapID, Fields: fields, Filter: s.filter}
}

func (s *TableScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for !s.done {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, fileDone, err := s.reader.Next(ctx)
		if err != nil {
			s.finish()
			return nil, fmt.Errorf("scan %s: %w", s.name, err)
		}
		if fileDone {
			s.metrics.Inc("files_read", 1)
			s.progress.FileDone()
			continue
		}
		if b == nil {
			s.finish()
			break
		}
		s.progress.AddRows(b.NumRows())
		s.metrics.Add(b, start)
		return b, nil
	}
	s.metrics.Add(nil, start)
	return nil, EOF
}

// conform makes b match the output schema: the column order the planner
// asked for and canonical types.
func (s *TableScan) conform(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	cols := make([]arrow.Array, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	bs := b.Schema()
	for i, f := range s.schema.Fields() {
		idx := bs.FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("scan %s: column %q missing from the data read (bug)", s.name, f.Name)
		}
		c := b.Column(idx[0])
		if arrow.TypeEqual(c.DataType(), f.Type) {
			c.Retain()
			cols[i] = c
			continue
		}
		if dt, ok := c.DataType().(*arrow.DictionaryType); ok && arrow.TypeEqual(dt.ValueType, f.Type) && slices.Contains(s.dict, f.Name) {
			c.Retain() // its field typed as the dictionary (scan.BatchSchema)
			cols[i] = c
			continue
		}
		cast, err := compute.CastArray(ctx, c, compute.SafeCastOptions(f.Type))
		if err != nil {
			return nil, fmt.Errorf("scan %s: column %q: %w", s.name, f.Name, err)
		}
		cols[i] = cast
	}
	return array.NewRecordBatch(scan.BatchSchema(s.schema, cols), cols, b.NumRows()), nil
}

func (s *TableScan) finish() {
	if s.done {
		return
	}
	s.done = true
	if s.reader != nil {
		if s.top != nil {
			s.metrics.Set("topn_ranges_skipped", s.reader.TopSkipped())
			s.metrics.Set("topn_row_groups_skipped", s.reader.TopGroupsSkipped())
		}
		if n := s.reader.GroupsPruned(); n > 0 {
			s.metrics.Set("row_groups_pruned", n)
		}
		s.reader.Close()
		s.reader = nil
	}
}

func (s *TableScan) Close() error {
	s.finish()
	if s.reader != nil {
		s.reader.Close()
		s.reader = nil
	}
	var err error
	if s.scan != nil {
		err = s.scan.Close()
		s.scan = nil
	}
	return err
}

// PlanFiles plans the scan without reading data: the number of data
// files it would read and the number pruning skips. EXPLAIN uses it.
func (s *TableScan) PlanFiles(ctx context.Context) (scanned, skipped int64, err error) {
	if s.noSnap {
		return 0, 0, nil
	}
	if s.preset {
		return int64(len(s.tasks)), 0, nil
	}
	tasks, err := s.query().Plan(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("scan %s: %w", s.name, err)
	}
	n := scan.DistinctFiles(tasks)
	total := max(scan.SnapshotDataFiles(s.tbl, s.snapID), n)
	return n, total - n, nil
}

// Tasks plans the scan's files without reading them, for a planner that
// splits a scan into parallel parts (NewFileScan).
func (s *TableScan) Tasks(ctx context.Context) ([]table.FileScanTask, error) {
	if s.noSnap {
		return nil, nil
	}
	tasks, err := s.query().Plan(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", s.name, err)
	}
	return tasks, nil
}

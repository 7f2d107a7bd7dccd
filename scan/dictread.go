package scan

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Dictionary-filtered reads. A query's scan whose pushed filter tests
// string columns only (predicates on types iceberg-go does not prune by
// aside), reading a file in which those columns are dictionary-encoded,
// reads that file here rather than through iceberg-go's scan, and filters
// it while the strings are still a dictionary and indices:
//
//  1. A row group's filter columns are read first, as dictionaries. Each
//     predicate is evaluated once per dictionary value (and once for
//     NULL), and a row's outcome is looked up by its index. A row group
//     whose dictionary pages settle the filter is left unread, or read
//     without its filter columns (dictpage.go).
//  2. The group's other columns are read only when some row passed, and
//     cut down to the rows that passed (arrow-go's filter kernel).
//  3. A filter column is made strings only for the rows that passed
//     (DictStrings).
//
// iceberg-go's scan makes every value of such a column a string (one
// builder append each), compares the strings with arrow-go's kernels and
// then filters every column: a scan of 10M rows with `status = 'x'` spent
// two thirds of its CPU there (BENCHMARKS.md, session 35).
//
// The filter is the scan's pruning filter, which the query's predicate
// implies; it may be applied as a superset: a predicate this code cannot
// evaluate passes everything, and so does a NULL where SQL and Iceberg
// might disagree (<>, NOT IN). The planner's own Filter above the scan
// gives the exact answer, as it does over iceberg-go's scan. The part of
// the filter the planner hands over as exact (ReadSpec.Exact: no Filter
// above the scan tests it) is evaluated exactly here, and by
// exactFilter.apply on every batch read any other way.
//
// A file qualifies when it has no delete files, is flat with a field id on
// every column, holds every column read as a top-level leaf whose type is
// the field's or a lossless widening of it (DirectCastable, as a MERGE's
// direct reads), and the filter columns' data pages are all
// dictionary-encoded in at least one row group read. A row group where
// they are not is read with them as strings, the predicates evaluated per
// row. Anything else is read by iceberg-go's scan, as before. A split (a
// range of the file's row groups) is read as iceberg-go reads it: the row
// groups whose split offset lies in its range.

// TestDictReadOff, when set (by tests only), turns dictionary-filtered
// reads off, for a test to compare them with iceberg-go's scan.
var TestDictReadOff atomic.Bool

// TestHookDictRead, when set (by tests only), is called with the rows of
// each row group a dictionary-filtered read reads, and how many of them
// passed; skipped is true where the group was left unread, its dictionary
// pages (dictpage.go) showing that no row can pass.
var TestHookDictRead func(rows, passed int64, skipped bool)

// dictFilter is a query's row filter compiled for dictionary-filtered
// reads, and the columns the scan reads.
type dictFilter struct {
	root   *dictNode
	ids    []int // the filter columns' field ids (dictNode.col indexes it)
	preds  int   // the predicates (dictNode.leaf indexes them)
	fields []iceberg.NestedField
	names  []string         // the columns read, as the batches name them
	types  []arrow.DataType // their Arrow types as iceberg-go reads them
	// exact: every predicate is evaluated exactly (compileExact), none
	// as a superset
	exact bool
	// prune tests each row group's statistics before its dictionaries
	// are read (plainprune.go); nil prunes nothing
	prune *groupPruner
	// countOnly: the scan's caller reads no value, only row counts
	// (ReadSpec.CountOnly): the columns read that are not filter columns
	// come back as NULLs, unread
	countOnly bool
}

// dictNode is one node of a compiled filter.
type dictNode struct {
	kind byte // 'T' true, 'F' false, '&' and, '|' or, 'p' predicate
	l, r *dictNode
	col  int               // 'p': the column (dictFilter.ids)
	leaf int               // 'p': its place among the predicates
	pass func(string) bool // 'p': on a value
	null bool              // 'p': on NULL
}

// compileDictFilter compiles rf (a scan's pruning filter, implied by the
// query's predicate) for the scan of names (the columns read) with
// schema; nil unless every predicate of rf that ReadFilter keeps is on a
// string column, and every column read is a primitive field.
func compileDictFilter(rf iceberg.BooleanExpression, schema *iceberg.Schema, names []string) *dictFilter {
	if rf == nil || schema == nil || len(names) == 0 {
		return nil
	}
	df, err := compileTree(rf, schema, false)
	if err != nil || len(df.ids) == 0 {
		return nil
	}
	df.names = names
	for _, name := range names {
		f, ok := schema.FindFieldByName(name)
		if !ok {
			return nil
		}
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok || f.ID >= reservedFieldIDs {
			return nil
		}
		t, err := table.TypeToArrowType(f.Type, false, false)
		if err != nil {
			return nil
		}
		df.fields = append(df.fields, f)
		df.types = append(df.types, t)
	}
	return df
}

// exactFilter is a filter the scan applies exactly (ReadSpec.Exact): the
// compiled predicates, and the names the batches give their columns.
type exactFilter struct {
	df    *dictFilter
	names []string // per df.ids
}

// compileExact compiles e, a filter of predicates on string columns that
// mean what SQL's do (the planner's Scan.Exact), to be applied exactly;
// an error where some part of it cannot be.
func compileExact(e iceberg.BooleanExpression, schema *iceberg.Schema) (*exactFilter, error) {
	df, err := compileTree(e, schema, true)
	if err != nil {
		return nil, fmt.Errorf("the scan's exact filter %s: %w (planner bug)", e, err)
	}
	ex := &exactFilter{df: df}
	for _, id := range df.ids {
		name, ok := schema.FindColumnName(id)
		if !ok {
			return nil, fmt.Errorf("no column of field id %d", id)
		}
		ex.names = append(ex.names, name)
	}
	return ex, nil
}

// compileTree binds e, NOT pushed into its leaves, to schema and compiles
// it, exactly or as a superset (dictFilter.exact); an error where it
// holds what cannot be compiled so.
func compileTree(e iceberg.BooleanExpression, schema *iceberg.Schema, exact bool) (*dictFilter, error) {
	pushed, err := iceberg.RewriteNotExpr(e)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(schema, pushed, false)
	if err != nil {
		return nil, err
	}
	df := &dictFilter{exact: exact}
	if df.root = df.compile(bound); df.root == nil {
		return nil, errors.New("not only predicates on string columns that SQL and Iceberg agree on")
	}
	return df, nil
}

// apply returns the rows of rec (columns named as the scan reads them)
// that pass ex; it consumes rec.
func (ex *exactFilter) apply(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	strs := make([]*array.String, len(ex.names))
	var owned []arrow.Array
	defer func() { releaseAll(owned) }()
	for k, name := range ex.names {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			rec.Release()
			return nil, fmt.Errorf("the exact filter's column %q is not in the data read (bug)", name)
		}
		c := rec.Column(idx[0])
		if c.DataType().ID() != arrow.STRING {
			cast, err := CastTo(ctx, c, arrow.BinaryTypes.String)
			if err != nil {
				rec.Release()
				return nil, fmt.Errorf("the exact filter's column %q: %w", name, err)
			}
			owned = append(owned, cast)
			c = cast
		}
		strs[k] = c.(*array.String)
	}
	n := int(rec.NumRows())
	d := &dictFile{df: ex.df}
	bm := d.eval(ex.df.root, make([]*array.Dictionary, len(ex.names)), strs, n)
	if countBits(bm) == n {
		return rec, nil
	}
	defer rec.Release()
	mask := bitsMask(bm, n)
	defer mask.Release()
	return compute.FilterRecordBatch(compute.WithAllocator(ctx, ReadBuffers), rec, mask, compute.DefaultFilterOptions())
}

// countBits is how many bits of bm are set.
func countBits(bm []uint64) int {
	n := 0
	for _, w := range bm {
		n += bits.OnesCount64(w)
	}
	return n
}

// bitsMask is the boolean array of the first n bits of bm (eval's
// bitmap: row i is bit i%64 of word i/64), its bytes the words', little
// end first, as Arrow lays out bits.
func bitsMask(bm []uint64, n int) arrow.Array {
	b := make([]byte, 0, len(bm)*8)
	for _, w := range bm {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return array.NewBoolean(n, memory.NewBufferBytes(b), nil, 0)
}

// reservedFieldIDs is where Iceberg's reserved field ids (metadata
// columns, row lineage) start: Integer.MAX_VALUE - 200.
const reservedFieldIDs = 1<<31 - 1 - 200

// compile turns a bound expression without NOT into a tree; nil where it
// holds something else (a predicate on a column other than a string).
func (df *dictFilter) compile(e iceberg.BooleanExpression) *dictNode {
	n, err := iceberg.VisitExpr(e, dictCompiler{df})
	if err != nil {
		return nil
	}
	return n
}

// dictCompiler is compile's visitor; a nil node is what cannot be
// compiled, and makes its parents nil.
type dictCompiler struct{ df *dictFilter }

func (dictCompiler) VisitTrue() *dictNode  { return &dictNode{kind: 'T'} }
func (dictCompiler) VisitFalse() *dictNode { return &dictNode{kind: 'F'} }

// VisitNot cannot be compiled: RewriteNotExpr leaves none.
func (dictCompiler) VisitNot(*dictNode) *dictNode { return nil }

func (dictCompiler) VisitAnd(l, r *dictNode) *dictNode {
	if l == nil || r == nil {
		return nil
	}
	return &dictNode{kind: '&', l: l, r: r}
}

func (dictCompiler) VisitOr(l, r *dictNode) *dictNode {
	if l == nil || r == nil {
		return nil
	}
	return &dictNode{kind: '|', l: l, r: r}
}

func (dictCompiler) VisitUnbound(iceberg.UnboundPredicate) *dictNode { return nil }

func (c dictCompiler) VisitBound(e iceberg.BoundPredicate) *dictNode {
	df := c.df
	f := e.Ref().Field()
	if _, ok := f.Type.(iceberg.StringType); !ok {
		if !df.exact && !safeFilterType(f.Type) {
			// ReadFilter drops it: iceberg-go neither prunes nor
			// filters by it, and the Filter above the scan tests it
			return &dictNode{kind: 'T'}
		}
		return nil // iceberg-go's scan prunes row groups by it
	}
	col := slices.Index(df.ids, f.ID)
	if col < 0 {
		col = len(df.ids)
		df.ids = append(df.ids, f.ID)
	}
	pass, exact := stringPredicate(e)
	n := &dictNode{kind: 'p', col: col, leaf: df.preds, null: true, pass: pass}
	df.preds++
	switch e.Op() {
	case iceberg.OpIsNull:
		n.pass, n.null, exact = func(string) bool { return false }, true, true
	case iceberg.OpNotNull:
		n.pass, n.null, exact = func(string) bool { return true }, false, true
	case iceberg.OpEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpIn, iceberg.OpStartsWith:
		// no NULL passes these, in SQL (NULL) as in Iceberg (false)
		n.null = false
	case iceberg.OpNEQ, iceberg.OpNotIn:
		// a NULL passes, as in Iceberg: exact for Iceberg's meaning, which
		// the planner ANDs with IS NOT NULL for SQL's (plan.exactNegated)
	default:
		// NOT STARTS WITH, NaN tests
		exact = false
	}
	if !exact {
		if df.exact {
			return nil
		}
		n.null = true // passes every row
	}
	return n
}

// stringPredicate is p's test of a non-NULL value (strings compare by
// their bytes, as skade's text does); exact is false, and the test passes
// everything, where p is not a comparison with string literals.
func stringPredicate(p iceberg.BoundPredicate) (test func(string) bool, exact bool) {
	all := func(string) bool { return true }
	switch q := p.(type) {
	case iceberg.BoundLiteralPredicate:
		lit, ok := q.Literal().Any().(string)
		if !ok {
			return all, false
		}
		switch p.Op() {
		case iceberg.OpEQ:
			return func(s string) bool { return s == lit }, true
		case iceberg.OpNEQ:
			return func(s string) bool { return s != lit }, true
		case iceberg.OpLT:
			return func(s string) bool { return s < lit }, true
		case iceberg.OpLTEQ:
			return func(s string) bool { return s <= lit }, true
		case iceberg.OpGT:
			return func(s string) bool { return s > lit }, true
		case iceberg.OpGTEQ:
			return func(s string) bool { return s >= lit }, true
		case iceberg.OpStartsWith:
			return func(s string) bool { return strings.HasPrefix(s, lit) }, true
		case iceberg.OpNotStartsWith:
			return func(s string) bool { return !strings.HasPrefix(s, lit) }, true
		}
	case iceberg.BoundSetPredicate:
		set := make(map[string]struct{})
		for _, l := range q.Literals().Members() {
			s, ok := l.Any().(string)
			if !ok {
				return all, false
			}
			set[s] = struct{}{}
		}
		in := p.Op() == iceberg.OpIn
		if !in && p.Op() != iceberg.OpNotIn {
			return all, false
		}
		return func(s string) bool { _, ok := set[s]; return ok == in }, true
	}
	return all, false
}

// dictLeaf is a compiled predicate's outcome per dictionary value of the
// row group being read.
type dictLeaf struct {
	node *dictNode
	dict arrow.Array // the dictionary the outcomes are of
	pass []bool
}

// dictFile is one file's dictionary-filtered read.
type dictFile struct {
	df      *dictFilter
	pr      *file.Reader
	fr      *pqarrow.FileReader // the filter columns as dictionaries
	plainFr *pqarrow.FileReader // as strings (row groups not all dictionary-encoded)
	props   pqarrow.ArrowReadProperties
	groups  []int
	dictG   []bool // per row group: its filter columns are all dictionary-encoded
	filter  []int  // the leaves of df.ids
	other   []int  // the leaves of the columns read that are not filter columns
	outLeaf []int  // per column read, its leaf
	leaves  []dictLeaf
	nulls   []bool // per filter column: the group being read may hold a NULL
	// pagePr reads the filter columns' dictionary pages alone (precheck);
	// pageDict holds each one's values
	pagePr   *file.Reader
	pageDict [][]string
	as       *arrow.Schema // the file's columns as pqarrow reads them
	// nullOut marks the columns read that come back as NULLs, unread
	// (dictFilter.countOnly); nullArrs holds one array of NULLs per such
	// column, which each batch takes a slice of
	nullOut  []bool
	nullArrs []arrow.Array
	// pruned counts the row groups left unread by their statistics; nan
	// are the data file's NaN counts, which those tests read
	pruned *atomic.Int64
	nan    map[int]int64
	// plain, when not nil, reads the other columns (in d.other's order)
	// page by page in a row group whose rows all pass (readAll; plain.go):
	// all fixed-width in PLAIN pages without NULLs
	plain *plainFile
	// filterPlain, when not nil, reads the filter columns page by page
	// (plain.go), dictionary pages as dictionary arrays, in a scan that
	// reads no other column (then no other reader's batches must line up
	// with its own)
	filterPlain *plainFile
}

// readDict reads f's tasks filtered by dictionary, calling emit with each
// batch (the columns read, named as the scan reads them); handled is
// false, with nothing emitted, where the file does not qualify (see
// above) and the caller reads it through iceberg-go's scan.
func readDict(ctx context.Context, f *fileRead, emit func(arrow.RecordBatch) bool) (handled bool, err error) {
	df := f.dict
	tasks := f.tasks()
	of := openTaskFile(ctx, f, tasks)
	if of == nil {
		return false, nil
	}
	defer of.close()
	src, pr := of.src, of.pr
	d := &dictFile{df: df, pr: pr, pruned: f.pruned, nan: f.task.File.NaNValueCounts()}
	defer func() { releaseAll(d.nullArrs) }()
	if !d.plan(tasks, of.size) {
		return false, nil
	}
	d.plain = d.planPlain(src, of.size, f.task.File.Count())
	d.filterPlain = d.planFilterPlain(src, of.size, f.task.File.Count())
	// a second reader of the footer already parsed, whose streams read a
	// column chunk only as far as asked (the dictionary page)
	pageProps := parquet.NewReaderProperties(ReadBuffers)
	pageProps.BufferedStreamEnabled = true
	pageProps.BufferSize = 64 << 10
	if ppr, err := file.NewParquetReader(src, file.WithReadProps(pageProps), file.WithMetadata(pr.MetaData())); err == nil {
		d.pagePr = ppr
		defer ppr.Close()
		d.pageDict = make([][]string, len(d.filter))
	}
	// long strings make fewer rows a batch (fileRead.wideRows)
	rows := wideBatch(wideBytesPerRow(pr.MetaData(), f.wide), queryBatchRows(f.tbl))
	d.props = pqarrow.ArrowReadProperties{Parallel: true, BatchSize: int64(rows)}
	props := d.props
	for _, leaf := range d.filter {
		props.SetReadDict(leaf, true)
	}
	if d.fr, err = pqarrow.NewFileReader(pr, props, ReadBuffers); err != nil {
		return true, err
	}
	co := &coalescer{emit: emit, rows: int64(props.BatchSize)}
	defer co.release()
	for _, g := range d.groups {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		more, err := d.readGroup(ctx, g, co.add)
		if err == nil && co.err != nil {
			err = co.err
		}
		if err != nil {
			return true, fmt.Errorf("file %s, row group %d: %w", f.task.File.FilePath(), g, err)
		}
		if !more {
			return true, nil
		}
	}
	co.flush()
	return true, co.err
}

// coalescer gathers the small batches a selective filter leaves into
// batches of about rows rows before they go to emit: fewer batches for
// the operators above, and the file reader's look-ahead (a number of
// batches) covers more of the file.
type coalescer struct {
	emit    func(arrow.RecordBatch) bool
	rows    int64
	pending []arrow.RecordBatch
	held    int64
	err     error
}

// add takes b; false when emit wants no more or the batches could not be
// joined (err).
func (c *coalescer) add(b arrow.RecordBatch) bool {
	if len(c.pending) == 0 && b.NumRows() >= c.rows/2 {
		return c.emit(b)
	}
	c.pending = append(c.pending, b)
	c.held += b.NumRows()
	if c.held < c.rows/2 {
		return true
	}
	return c.flush()
}

// flush emits what is pending as one batch.
func (c *coalescer) flush() bool {
	if len(c.pending) == 0 {
		return true
	}
	pending := c.pending
	c.pending, c.held = nil, 0
	if len(pending) == 1 {
		return c.emit(pending[0])
	}
	defer func() {
		for _, b := range pending {
			b.Release()
		}
	}()
	sc := pending[0].Schema()
	cols := make([]arrow.Array, sc.NumFields())
	var rows int64
	for _, b := range pending {
		rows += b.NumRows()
	}
	parts := make([]arrow.Array, len(pending))
	for i := range cols {
		for k, b := range pending {
			parts[k] = b.Column(i)
		}
		a, err := array.Concatenate(parts, ReadBuffers)
		if err != nil {
			releaseAll(cols)
			c.err = err
			return false
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(sc, cols, rows)
	releaseAll(cols)
	return c.emit(out)
}

// release drops what is pending (a read that stopped early).
func (c *coalescer) release() {
	for _, b := range c.pending {
		b.Release()
	}
	c.pending = nil
}

// plan maps the columns to the file's leaves and picks the row groups of
// tasks (the file is size bytes); false where the file does not qualify.
func (d *dictFile) plan(tasks []table.FileScanTask, size int64) bool {
	meta := d.pr.MetaData()
	if meta.IsSetEncryptionAlgorithm() || meta.FileDecryptor != nil {
		return false
	}
	leafOf, as, ok := FlatLeaves(meta)
	if !ok {
		return false
	}
	d.as = as
	for _, id := range d.df.ids {
		leaf, ok := leafOf[int32(id)]
		if !ok || as.Field(leaf).Type.ID() != arrow.STRING || meta.Schema.Column(leaf).PhysicalType() != parquet.Types.ByteArray {
			return false
		}
		d.filter = append(d.filter, leaf)
	}
	d.nullOut = make([]bool, len(d.df.fields))
	for i, f := range d.df.fields {
		leaf, ok := leafOf[int32(f.ID)]
		if !ok || !DirectCastable(as.Field(leaf).Type, d.df.types[i]) {
			return false
		}
		d.outLeaf = append(d.outLeaf, leaf)
		if slices.Contains(d.filter, leaf) {
			continue
		}
		if d.df.countOnly {
			d.nullOut[i] = true // no value of it is read above
			continue
		}
		if !slices.Contains(d.other, leaf) {
			d.other = append(d.other, leaf)
		}
	}
	if d.groups = taskGroups(meta, tasks, size); d.groups == nil {
		return false
	}
	// a row group whose filter columns are not all dictionary-encoded
	// (a writer's small last group, a dictionary that grew too large) is
	// read with them as strings; a file without any such group goes to
	// the scan
	d.dictG = make([]bool, meta.NumRowGroups())
	anyDict := false
	for _, g := range d.groups {
		d.dictG[g] = true
		for _, leaf := range d.filter {
			if !AllDictPages(meta, leaf, []int{g}) {
				d.dictG[g] = false
			}
		}
		anyDict = anyDict || d.dictG[g]
	}
	if !anyDict {
		return false
	}
	d.leaves = make([]dictLeaf, d.df.preds)
	var collect func(n *dictNode)
	collect = func(n *dictNode) {
		switch n.kind {
		case '&', '|':
			collect(n.l)
			collect(n.r)
		case 'p':
			d.leaves[n.leaf].node = n
		}
	}
	collect(d.df.root)
	d.nulls = make([]bool, len(d.filter))
	return true
}

// taskGroups is the row groups of the file (footer meta, size bytes)
// that tasks read, ascending: all of them for a task of the whole file,
// else those whose split offset lies in the task's range, as iceberg-go
// picks them (the data file's split offsets when they are one per row
// group, ascending and inside the file; else each group's first page).
// nil where a range is not one iceberg-go reads.
func taskGroups(meta *metadata.FileMetaData, tasks []table.FileScanTask, size int64) []int {
	n := meta.NumRowGroups()
	use := make([]bool, n)
	for _, t := range tasks {
		if IsWhole(t) {
			for g := range use {
				use[g] = true
			}
			continue
		}
		start, length := t.Start, t.Length
		if start < 0 || length <= 0 || start > size {
			return nil
		}
		length = min(length, size-start)
		offsets := t.File.SplitOffsets()
		if !validOffsets(offsets, n, size) {
			offsets = make([]int64, n)
			for g := range offsets {
				offsets[g] = groupOffset(meta.RowGroup(g))
			}
		}
		for g, o := range offsets {
			if o >= start && o < start+length {
				use[g] = true
			}
		}
	}
	groups := []int{}
	for g, u := range use {
		if u {
			groups = append(groups, g)
		}
	}
	return groups
}

// validOffsets reports whether offsets are one per row group (n),
// ascending, and inside a file of size bytes.
func validOffsets(offsets []int64, n int, size int64) bool {
	return len(offsets) == n && ascendingInside(offsets, size)
}

// groupOffset is where row group rg starts for split planning: its first
// column's dictionary page, else its first data page, else its file
// offset.
func groupOffset(rg *metadata.RowGroupMetaData) int64 {
	if rg.NumColumns() > 0 {
		if c, err := rg.ColumnChunk(0); err == nil {
			data := c.DataPageOffset()
			if c.HasDictionaryPage() {
				if d := c.DictionaryPageOffset(); d >= 0 && (data < 0 || d < data) {
					return d
				}
			}
			if data >= 0 {
				return data
			}
		}
	}
	return rg.FileOffset()
}

// queryBatchRows is the batch size a query's scan of tbl reads with
// (BatchOpts): the table's read.parquet.batch-size, else readBatchRows.
func queryBatchRows(tbl *table.Table) int {
	if v, ok := tbl.Properties()[table.ParquetBatchSizeKey]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return readBatchRows
}

// filtered is one batch of a row group's filter columns and which of its
// rows passed.
type filtered struct {
	rec  arrow.RecordBatch // the filter columns, as dictionaries
	bits []uint64          // the rows that passed
	n    int               // how many
}

// readGroup reads row group g filtered, emitting its batches; false when
// emit wants no more.
func (d *dictFile) readGroup(ctx context.Context, g int, emit func(arrow.RecordBatch) bool) (bool, error) {
	rg := d.pr.MetaData().RowGroup(g)
	if !d.df.prune.mayMatch(d.pr.MetaData(), g, d.nan) {
		if d.pruned != nil {
			d.pruned.Add(1)
		}
		if TestHookDictRead != nil {
			TestHookDictRead(rg.NumRows(), 0, true)
		}
		return true, nil
	}
	for k, leaf := range d.filter {
		d.nulls[k] = true
		if cc, err := rg.ColumnChunk(leaf); err == nil {
			if st, err := cc.Statistics(); err == nil && st != nil && st.HasNullCount() && st.NullCount() == 0 {
				d.nulls[k] = false
			}
		}
	}
	for i := range d.leaves {
		d.leaves[i].dict = nil
	}
	var kept []filtered
	defer func() {
		for _, f := range kept {
			f.rec.Release()
		}
	}()
	if d.dictG[g] {
		switch d.precheck(g) {
		case settledNo:
			if TestHookDictRead != nil {
				TestHookDictRead(rg.NumRows(), 0, true)
			}
			return true, nil
		case settledYes:
			if d.filterOnly() {
				if TestHookDictRead != nil {
					TestHookDictRead(rg.NumRows(), rg.NumRows(), false)
				}
				return d.readAll(ctx, g, emit)
			}
		}
	}
	fr := d.fr
	if !d.dictG[g] && d.filterPlain == nil {
		if d.plainFr == nil {
			var err error
			if d.plainFr, err = pqarrow.NewFileReader(d.pr, d.props, ReadBuffers); err != nil {
				return false, err
			}
		}
		fr = d.plainFr
	}
	var rows, passed int64
	// filterBatch evaluates the filter on one batch of the filter
	// columns; any, when set, takes each column as a dictionary array or
	// as strings, whatever the group's chunks are (pages read by skade,
	// which give a plain page as strings)
	filterBatch := func(rec arrow.RecordBatch, any bool) error {
		dicts := make([]*array.Dictionary, len(d.filter))
		strs := make([]*array.String, len(d.filter))
		for k := range d.filter {
			switch c := rec.Column(k).(type) {
			case *array.Dictionary:
				dicts[k] = c
			case *array.String:
				strs[k] = c
			}
			if dicts[k] == nil && strs[k] == nil || !any && ((dicts[k] != nil) != d.dictG[g] || (strs[k] != nil) == d.dictG[g]) {
				return fmt.Errorf("filter column read as %s (broken invariant)", rec.Column(k).DataType())
			}
		}
		if err := d.lookups(dicts); err != nil {
			return err
		}
		n := int(rec.NumRows())
		bm := d.eval(d.df.root, dicts, strs, n)
		cnt := countBits(bm)
		rec.Retain()
		kept = append(kept, filtered{rec: rec, bits: bm, n: cnt})
		rows += int64(n)
		passed += int64(cnt)
		return nil
	}
	if p := d.filterPlain; p != nil {
		var failed error
		yield := func(rec arrow.RecordBatch, err error) bool {
			if err == nil {
				err = filterBatch(rec, true)
				rec.Release()
			}
			failed = err
			return err == nil
		}
		size := d.props.BatchSize
		if !p.readGroup(ctx, g, size, size, ReadBuffers, yield, yield) && failed == nil {
			return false, nil
		}
		if failed != nil {
			return false, failed
		}
	} else {
		rr, err := fr.GetRecordReader(ctx, d.filter, []int{g})
		if err != nil {
			return false, err
		}
		for rr.Next() {
			if err := filterBatch(rr.RecordBatch(), false); err != nil {
				rr.Release()
				return false, err
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return false, err
		}
	}
	if TestHookDictRead != nil {
		TestHookDictRead(rows, passed, false)
	}
	if passed == 0 {
		return true, nil
	}
	if len(d.other) == 0 {
		for _, f := range kept {
			if f.n == 0 {
				continue
			}
			out, err := d.batch(ctx, f, nil, int(f.rec.NumRows()))
			if err != nil {
				return false, err
			}
			if !emit(out) {
				return false, nil
			}
		}
		return true, nil
	}
	or, err := fr.GetRecordReader(ctx, d.other, []int{g})
	if err != nil {
		return false, err
	}
	defer or.Release()
	i := 0
	for or.Next() {
		rec := or.RecordBatch()
		if i >= len(kept) || kept[i].rec.NumRows() != rec.NumRows() {
			return false, errors.New("the row group's columns came in batches of different sizes (broken invariant)")
		}
		f := kept[i]
		i++
		if f.n == 0 {
			continue
		}
		out, err := d.batch(ctx, f, rec, int(rec.NumRows()))
		if err != nil {
			return false, err
		}
		if !emit(out) {
			return false, nil
		}
	}
	if err := or.Err(); err != nil {
		return false, err
	}
	if i != len(kept) {
		return false, errors.New("the row group's columns came in batches of different sizes (broken invariant)")
	}
	return true, nil
}

// nullsOf is n NULLs for column i of the scan (nullOut): a slice of one
// array of NULLs kept for the file, made again when it is too short.
func (d *dictFile) nullsOf(i, n int) arrow.Array {
	if d.nullArrs == nil {
		d.nullArrs = make([]arrow.Array, len(d.nullOut))
	}
	if a := d.nullArrs[i]; a == nil || a.Len() < n {
		if a != nil {
			a.Release()
		}
		d.nullArrs[i] = array.MakeArrayOfNull(ReadBuffers, d.df.types[i], max(n, int(d.props.BatchSize)))
	}
	return array.NewSlice(d.nullArrs[i], 0, int64(n))
}

// filterOnly reports whether the scan returns none of the filter columns.
func (d *dictFile) filterOnly() bool {
	for _, leaf := range d.filter {
		if slices.Contains(d.outLeaf, leaf) {
			return false
		}
	}
	return true
}

// planPlain plans reading d's other columns page by page (src, size
// bytes, rows rows by the manifest); nil where they do not all qualify.
func (d *dictFile) planPlain(src io.ReaderAt, size, rows int64) *plainFile {
	if len(d.other) == 0 {
		return nil
	}
	return d.planLeaves(src, size, rows, d.other, false)
}

// planFilterPlain plans reading d's filter columns page by page, where
// the scan reads no other column; nil where they do not qualify.
func (d *dictFile) planFilterPlain(src io.ReaderAt, size, rows int64) *plainFile {
	if len(d.other) > 0 {
		return nil
	}
	for _, leaf := range d.filter {
		if d.as.Field(leaf).Type.ID() != arrow.STRING {
			return nil
		}
	}
	return d.planLeaves(src, size, rows, d.filter, true)
}

// planLeaves plans reading leaves page by page; filter columns take NULLs
// and come as dictionary arrays where their pages are dictionary-encoded.
func (d *dictFile) planLeaves(src io.ReaderAt, size, rows int64, leaves []int, filter bool) *plainFile {
	if TestPlainQueryOff.Load() {
		return nil
	}
	meta := d.pr.MetaData()
	fields := make([]arrow.Field, len(leaves))
	ids := make([]int, len(leaves))
	for i, leaf := range leaves {
		fields[i] = d.as.Field(leaf)
		fields[i].Metadata = arrow.Metadata{}
		ids[i] = int(meta.Schema.Column(leaf).SchemaNode().FieldID())
	}
	schema := arrow.NewSchema(fields, nil)
	cols := plainColumns(meta, schema, ids, rows, filter)
	if cols == nil {
		return nil
	}
	for i := range cols {
		cols[i].dict = filter
	}
	return newPlainFile(d.pr, src, size, schema, cols)
}

// readAll emits every row of row group g, whose rows all pass the filter
// and none of whose filter columns the scan returns; false when emit
// wants no more.
func (d *dictFile) readAll(ctx context.Context, g int, emit func(arrow.RecordBatch) bool) (bool, error) {
	if len(d.other) == 0 {
		// every column returned is NULLs (countOnly): the group's rows,
		// nothing read
		rows, size := d.pr.MetaData().RowGroup(g).NumRows(), d.props.BatchSize
		for at := int64(0); at < rows; at += size {
			n := int(min(size, rows-at))
			out, err := d.batch(ctx, filtered{n: n}, nil, n)
			if err != nil {
				return false, err
			}
			if !emit(out) {
				return false, nil
			}
		}
		return true, nil
	}
	if p := d.plain; p != nil {
		var failed error
		yield := func(rec arrow.RecordBatch, err error) bool {
			if err != nil {
				failed = err
				return false
			}
			defer rec.Release()
			n := int(rec.NumRows())
			out, err := d.batch(ctx, filtered{n: n}, rec, n)
			if err != nil {
				failed = err
				return false
			}
			return emit(out)
		}
		rows := d.props.BatchSize
		more := p.readGroup(ctx, g, rows, plainBatchMost*rows, ReadBuffers, yield, yield)
		return more && failed == nil, failed
	}
	or, err := d.fr.GetRecordReader(ctx, d.other, []int{g})
	if err != nil {
		return false, err
	}
	defer or.Release()
	for or.Next() {
		rec := or.RecordBatch()
		n := int(rec.NumRows())
		out, err := d.batch(ctx, filtered{n: n}, rec, n)
		if err != nil {
			return false, err
		}
		if !emit(out) {
			return false, nil
		}
	}
	return true, or.Err()
}

// lookups computes each predicate's outcome per value of its column's
// dictionary, where the dictionary is not the one they are of already.
func (d *dictFile) lookups(dicts []*array.Dictionary) error {
	for i := range d.leaves {
		l := &d.leaves[i]
		if dicts[l.node.col] == nil {
			continue // read as strings
		}
		dict := dicts[l.node.col].Dictionary()
		if l.dict == dict {
			continue
		}
		s, ok := dict.(*array.String)
		if !ok {
			return fmt.Errorf("a dictionary of %s, not strings", dict.DataType())
		}
		l.pass = slices.Grow(l.pass[:0], s.Len())[:s.Len()]
		for k := range s.Len() {
			l.pass[k] = s.IsValid(k) && l.node.pass(s.Value(k))
		}
		l.dict = dict
	}
	return nil
}

// eval is the bitmap of the n rows that pass node n.
func (d *dictFile) eval(n *dictNode, dicts []*array.Dictionary, strs []*array.String, rows int) []uint64 {
	words := (rows + 63) / 64
	out := make([]uint64, words)
	switch n.kind {
	case 'T':
		for i := range out {
			out[i] = ^uint64(0)
		}
		if r := rows % 64; r != 0 {
			out[words-1] = 1<<r - 1
		}
	case 'F':
	case '&', '|':
		l, r := d.eval(n.l, dicts, strs, rows), d.eval(n.r, dicts, strs, rows)
		for i := range out {
			if n.kind == '&' {
				out[i] = l[i] & r[i]
			} else {
				out[i] = l[i] | r[i]
			}
		}
	case 'p':
		if sc := strs[n.col]; sc != nil {
			for i := range rows {
				ok := n.null
				if sc.IsValid(i) {
					ok = n.pass(sc.Value(i))
				}
				if ok {
					out[i>>6] |= 1 << (i & 63)
				}
			}
			break
		}
		pass := d.leaves[n.leaf].pass
		dc := dicts[n.col]
		ind, dense := dc.Indices().(*array.Int32)
		var idx []int32
		if dense {
			idx = ind.Int32Values()
		}
		if dense && dc.NullN() == 0 {
			// no NULL: a lookup per row, a word at a time
			for w := range out {
				var word uint64
				base := w * 64
				for j, k := range idx[base:min(base+64, rows)] {
					if k >= 0 && int(k) < len(pass) && pass[k] {
						word |= 1 << j
					}
				}
				out[w] = word
			}
			break
		}
		for i := range rows {
			ok := n.null
			if dc.IsValid(i) {
				var k int
				if dense {
					k = int(idx[i])
				} else {
					k = dc.GetValueIndex(i)
				}
				ok = k >= 0 && k < len(pass) && pass[k]
			}
			if ok {
				out[i>>6] |= 1 << (i & 63)
			}
		}
	}
	return out
}

// batch is one output batch: the rows of f (rows rows; every one where
// f.n is rows, and then f.rec may be nil when the scan returns no filter
// column) that passed, with the columns read in the scan's order; rec
// holds the other columns (nil when there are none).
func (d *dictFile) batch(ctx context.Context, f filtered, rec arrow.RecordBatch, rows int) (arrow.RecordBatch, error) {
	var sel []int32
	var mask arrow.Array
	if f.n < rows {
		sel = make([]int32, 0, f.n)
		for w, word := range f.bits {
			for word != 0 {
				sel = append(sel, int32(w*64+bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		mask = bitsMask(f.bits, rows)
		defer mask.Release()
	}
	cols := make([]arrow.Array, len(d.outLeaf))
	fields := make([]arrow.Field, len(d.outLeaf))
	for i, leaf := range d.outLeaf {
		var a arrow.Array
		var err error
		if d.nullOut[i] {
			a = d.nullsOf(i, f.n)
		} else if k := slices.Index(d.filter, leaf); k >= 0 && f.rec.Column(k).DataType().ID() == arrow.DICTIONARY {
			a, err = DictStrings(ReadBuffers, f.rec.Column(k).(*array.Dictionary), sel)
		} else {
			var col arrow.Array
			if k >= 0 {
				col = f.rec.Column(k)
			} else {
				col = rec.Column(slices.Index(d.other, leaf))
			}
			if mask == nil {
				col.Retain()
				a = col
			} else {
				a, err = compute.FilterArray(compute.WithAllocator(ctx, ReadBuffers), col, mask, *compute.DefaultFilterOptions())
			}
		}
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols[i] = a
		fields[i] = arrow.Field{Name: d.df.names[i], Type: a.DataType(), Nullable: true}
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(f.n))
	releaseAll(cols)
	return out, nil
}

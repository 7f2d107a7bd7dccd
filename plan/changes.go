package plan

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
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/scan"
)

// The change feed: table_changes('t', from [, to] [, identifier_columns
// => 'a, b']) returns the rows each commit after snapshot from, up to and
// including snapshot to (default: the current one), inserted, deleted or
// updated, with _change_type ('insert', 'delete', 'update_preimage',
// 'update_postimage'), _snapshot_id, _sequence_number and _commit_time.
// from and to are snapshot ids or timestamps (the last snapshot committed
// at or before it); a NULL from starts before the table's first commit.
//
// Each commit is computed from its files, whatever wrote them: a data file
// the commit removed, or whose delete files changed (position deletes,
// deletion vectors, equality deletes), contributes its rows live before
// the commit that are not live after it; a data file it added contributes
// its rows. Rows a copy-on-write rewrite only carried over appear on both
// sides and are cancelled, row for row (equal in every column), so they
// never appear; a compaction yields nothing. A deleted and an inserted row
// with the same identifier columns (the table's identifier fields, or the
// identifier_columns argument) become an update pair. On a table with row
// lineage (format version 3) each row's _row_id and sequence number are
// read and compared too, and _row_id is the identifier unless
// identifier_columns names others. The cost is two
// whole-file plans per commit and reading every touched file twice
// (before and after) and every added file once; docs/merge.md, "Change
// feed".

// changeCols are the columns the feed appends to the table's.
var changeCols = []struct {
	name string
	typ  arrow.DataType
}{{"_change_type", tString}, {"_snapshot_id", tInt64}, {"_sequence_number", tInt64}, {"_commit_time", tTimestampTZ}}

// Change types, in the order the feed emits them within a commit.
var changeTypes = []string{"delete", "update_preimage", "update_postimage", "insert"}

func (b *binder) tableChanges(t *parser.TableFunc, pos []*exec.Literal, named map[string]*exec.Literal) (Node, error) {
	const fn = "table_changes"
	if len(pos) < 2 || len(pos) > 3 {
		return nil, errorf(t.Pos, "%s takes a table name, the snapshot to start after and optionally the snapshot to end at: table_changes('t', from_snapshot [, to_snapshot])", fn)
	}
	if !pos[0].Value.IsValid() || pos[0].DataType().ID() != arrow.STRING {
		return nil, errorf(t.Pos, "%s: the first argument must be the table's name, as a string", fn)
	}
	name := pos[0].Value.(*scalar.String).String()
	ref, err := b.cat.LookupTable(b.ctx, strings.Split(name, "."))
	if err != nil {
		return nil, atPos(t.Pos, err)
	}
	meta := ref.Table.Metadata()
	cur := ref.Table.CurrentSnapshot()
	var to *table.Snapshot
	if len(pos) == 3 {
		if to, err = b.changeBound(meta, ref.Name, pos[2], t.Pos, "to"); err != nil {
			return nil, err
		}
		if to == nil {
			return nil, errorf(t.Pos, "%s: table %s has no snapshot at or before the end bound", fn, ref.Name)
		}
	} else {
		to = cur
	}
	from, err := b.changeBound(meta, ref.Name, pos[1], t.Pos, "from")
	if err != nil {
		return nil, err
	}
	// The commits in range, oldest first.
	var chain []*table.Snapshot
	fromID := int64(-1)
	if from != nil {
		fromID = from.SnapshotID
	}
	for s := to; s != nil && s.SnapshotID != fromID; {
		chain = append(chain, s)
		if s.ParentSnapshotID == nil {
			if from != nil {
				return nil, errorf(t.Pos, "%s: snapshot %d is not an ancestor of snapshot %d of table %s", fn, fromID, to.SnapshotID, ref.Name)
			}
			break
		}
		if *s.ParentSnapshotID == fromID {
			break
		}
		if s = meta.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return nil, errorf(t.Pos, "%s: the history of table %s between the bounds was expired; pick a later start", fn, ref.Name)
		}
	}
	slices.Reverse(chain)

	isch := meta.CurrentSchema()
	asch, err := table.SchemaToArrowSchema(isch, nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ref.Name, err)
	}
	n := &SourceScan{Name: fmt.Sprintf("table_changes('%s')", ref.Name)}
	var fields []string
	var readFields []arrow.Field
	for i, f := range asch.Fields() {
		typ := canonical(f.Type)
		n.Cols = append(n.Cols, b.newCol(f.Name, "", typ, !isch.Fields()[i].Required))
		fields = append(fields, f.Name)
		readFields = append(readFields, arrow.Field{Name: f.Name, Type: typ, Nullable: true})
	}
	nt := len(fields)
	outFields := slices.Clone(readFields)
	lineage := mergeinto.TracksLineage(ref.Table)
	if lineage {
		// read each row's lineage too: it pairs updates and tells
		// carry-over apart
		fields, readFields = withLineage(fields, readFields)
	}
	var ids []string
	for _, id := range isch.IdentifierFieldIDs {
		if fd, ok := isch.FindFieldByID(id); ok {
			ids = append(ids, fd.Name)
		}
	}
	if lineage {
		// a row's identity is its _row_id
		ids = []string{mergeinto.LineageColumns[0]}
	}
	if v, ok := named["identifier_columns"]; ok {
		if !v.Value.IsValid() || v.DataType().ID() != arrow.STRING {
			return nil, errorf(t.Pos, "%s: identifier_columns must be a string of column names, such as 'id' or 'a, b'", fn)
		}
		ids = nil
		for _, c := range strings.Split(v.Value.(*scalar.String).String(), ",") {
			ids = append(ids, strings.TrimSpace(c))
		}
	}
	for k := range named {
		if k != "identifier_columns" {
			return nil, errorf(t.Pos, "%s: unknown option %q; the option is identifier_columns", fn, k)
		}
	}
	var idCols []int
	for _, c := range ids {
		i := slices.IndexFunc(fields, func(f string) bool { return strings.EqualFold(f, c) })
		if i < 0 {
			return nil, errorf(t.Pos, "%s: table %s has no column %q%s", fn, ref.Name, c, didYouMean(c, fields[:nt]))
		}
		idCols = append(idCols, i)
	}
	for _, c := range changeCols {
		n.Cols = append(n.Cols, b.newCol(c.name, "", c.typ, false))
	}
	for _, c := range changeCols {
		outFields = append(outFields, arrow.Field{Name: c.name, Type: c.typ})
	}
	feed := &changeFeed{name: ref.Name, tbl: ref.Table, parent: from, chain: chain, fields: fields,
		read: arrow.NewSchema(readFields, nil), out: arrow.NewSchema(outFields, nil), idCols: idCols, nt: nt}
	n.Open = func() (exec.Operator, error) {
		return exec.NewReaderSource(n.Name, feed.out, feed.open), nil
	}
	return n, nil
}

// changeBound resolves a bound of table_changes: a snapshot id, or a
// timestamp (the last snapshot of the main branch committed at or before
// it; nil when there is none). A NULL from is before the first commit.
func (b *binder) changeBound(meta table.Metadata, name string, lit *exec.Literal, pos parser.Pos, which string) (*table.Snapshot, error) {
	if !lit.Value.IsValid() {
		if which == "to" {
			return nil, errorf(pos, "table_changes: the end bound must not be NULL; leave it out to end at the current snapshot")
		}
		return nil, nil
	}
	if isNumericType(lit.DataType()) {
		id, err := litInt(b, lit, pos, "table_changes")
		if err != nil {
			return nil, err
		}
		s := meta.SnapshotByID(id)
		if s == nil {
			return nil, errorf(pos, "table_changes: table %s has no snapshot %d (it may have been expired)", name, id)
		}
		return s, nil
	}
	c, err := exec.NewCast(lit, tTimestampTZ, false)
	if err != nil {
		return nil, errorf(pos, "table_changes: the %s bound must be a snapshot id or a timestamp, not type %s", which, exec.TypeName(lit.DataType()))
	}
	v, err := evalConst(b.ctx, b.now, c)
	if err != nil {
		return nil, atPos(pos, err)
	}
	at := time.UnixMicro(int64(v.Value.(*scalar.Timestamp).Value))
	var best *table.Snapshot
	for s := meta.CurrentSnapshot(); s != nil; {
		if time.UnixMilli(s.TimestampMs).After(at) {
			if s.ParentSnapshotID == nil {
				break
			}
			s = meta.SnapshotByID(*s.ParentSnapshotID)
			continue
		}
		best = s
		break
	}
	return best, nil
}

// changeFeed computes the feed when the statement runs.
type changeFeed struct {
	name   string
	tbl    *table.Table
	parent *table.Snapshot // the snapshot before the first commit; nil: none
	chain  []*table.Snapshot
	fields []string
	// read is the table's columns, then on a table with row lineage
	// its lineage columns (mergeinto.LineageColumns)
	read   *arrow.Schema
	out    *arrow.Schema
	idCols []int
	nt     int // the table's column count
}

// changeRow is one row of a read batch.
type changeRow struct {
	b   int // index into the batches read for the commit
	row int
}

func (f *changeFeed) open(ctx context.Context) (array.RecordReader, error) {
	mem := memory.DefaultAllocator
	enc, err := exec.NewKeyEncoder(f.readTypes())
	if err != nil {
		return nil, fmt.Errorf("table_changes(%s): %w", f.name, err)
	}
	var out []arrow.RecordBatch
	release := func() {
		for _, b := range out {
			b.Release()
		}
	}
	plans := map[int64]map[string]table.FileScanTask{}
	plan := func(s *table.Snapshot) (map[string]table.FileScanTask, error) {
		if s == nil {
			return nil, nil
		}
		if p, ok := plans[s.SnapshotID]; ok {
			return p, nil
		}
		sc := f.tbl.Scan(table.WithSnapshotID(s.SnapshotID))
		tasks, err := scan.PlanWholeFiles(ctx, sc)
		sc.Close()
		if err != nil {
			return nil, err
		}
		m := make(map[string]table.FileScanTask, len(tasks))
		for _, t := range tasks {
			m[t.File.FilePath()] = t
		}
		plans[s.SnapshotID] = m
		return m, nil
	}
	parent := f.parent
	for _, s := range f.chain {
		before, err := plan(parent)
		if err != nil {
			release()
			return nil, fmt.Errorf("table_changes(%s): planning snapshot %d: %w", f.name, parent.SnapshotID, err)
		}
		after, err := plan(s)
		if err != nil {
			release()
			return nil, fmt.Errorf("table_changes(%s): planning snapshot %d: %w", f.name, s.SnapshotID, err)
		}
		bs, err := f.commit(ctx, mem, enc, parent, s, before, after)
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, bs...)
		if parent != nil {
			delete(plans, parent.SnapshotID)
		}
		parent = s
	}
	rdr, err := array.NewRecordReader(f.out, out)
	release()
	return rdr, err
}

func (f *changeFeed) readTypes() []arrow.DataType {
	ts := make([]arrow.DataType, f.read.NumFields())
	for i, fd := range f.read.Fields() {
		ts[i] = fd.Type
	}
	return ts
}

// commit computes the changes of commit s over its parent p.
func (f *changeFeed) commit(ctx context.Context, mem memory.Allocator, enc *exec.KeyEncoder, p, s *table.Snapshot, before, after map[string]table.FileScanTask) ([]arrow.RecordBatch, error) {
	var batches []arrow.RecordBatch
	var keys [][]string // per batch, each row's key
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	read := func(snap *table.Snapshot, task table.FileScanTask) (first, n int, err error) {
		task.Residual = nil
		op, err := exec.NewFileScan(f.name, f.tbl, snap, f.fields, f.read, nil /* filter */, []table.FileScanTask{task})
		if err != nil {
			return 0, 0, err
		}
		rows, err := exec.Drain(ctx, op)
		if err != nil {
			return 0, 0, fmt.Errorf("table_changes(%s): reading data file %s at snapshot %d: %w", f.name, task.File.FilePath(), snap.SnapshotID, err)
		}
		first = len(batches)
		// every batch is the deferred release's before any can fail
		batches = append(batches, rows...)
		for _, b := range rows {
			var rk exec.RowKeys
			if err := enc.Encode(b.Columns(), &rk); err != nil {
				return 0, 0, err
			}
			ks := make([]string, rk.N)
			for i := range ks {
				ks[i] = string(rk.Key(i))
			}
			keys = append(keys, ks)
		}
		return first, len(rows), nil
	}
	var deleted, inserted []changeRow
	// deletes: rows live before and not after, in files the commit removed
	// or whose deletes it changed
	for _, path := range sortedKeys(before) {
		bt := before[path]
		at, kept := after[path]
		if kept && deleteSet(at) == deleteSet(bt) {
			continue
		}
		live := map[string]int{}
		if kept {
			first, n, err := read(s, at)
			if err != nil {
				return nil, err
			}
			for i := first; i < first+n; i++ {
				for _, k := range keys[i] {
					live[k]++
				}
			}
		}
		first, n, err := read(p, bt)
		if err != nil {
			return nil, err
		}
		for i := first; i < first+n; i++ {
			for r, k := range keys[i] {
				if live[k] > 0 {
					live[k]--
					continue
				}
				deleted = append(deleted, changeRow{i, r})
			}
		}
	}
	for _, path := range sortedKeys(after) {
		if _, old := before[path]; old {
			continue
		}
		first, n, err := read(s, after[path])
		if err != nil {
			return nil, err
		}
		for i := first; i < first+n; i++ {
			for r := range keys[i] {
				inserted = append(inserted, changeRow{i, r})
			}
		}
	}
	// carry-over: a deleted and an inserted row equal in every column
	// cancel (a copy-on-write rewrite's unchanged rows, a compaction)
	pending := map[string][]int{}
	for i, d := range deleted {
		k := keys[d.b][d.row]
		pending[k] = append(pending[k], i)
	}
	gone := make([]bool, len(deleted))
	var ins []changeRow
	for _, r := range inserted {
		k := keys[r.b][r.row]
		if l := pending[k]; len(l) > 0 {
			gone[l[0]] = true
			pending[k] = l[1:]
			continue
		}
		ins = append(ins, r)
	}
	var del []changeRow
	for i, d := range deleted {
		if !gone[i] {
			del = append(del, d)
		}
	}
	kind := map[changeRow]int{} // index into changeTypes
	for _, d := range del {
		kind[d] = 0
	}
	for _, r := range ins {
		kind[r] = 3
	}
	if len(f.idCols) > 0 {
		idKey := func(r changeRow) (string, bool) {
			var sb strings.Builder
			for _, c := range f.idCols {
				col := batches[r.b].Column(c)
				if col.IsNull(r.row) {
					return "", false
				}
				sb.WriteString(col.ValueStr(r.row))
				sb.WriteByte(0)
			}
			return sb.String(), true
		}
		dels, inss := map[string][]changeRow{}, map[string][]changeRow{}
		for _, d := range del {
			if k, ok := idKey(d); ok {
				dels[k] = append(dels[k], d)
			}
		}
		for _, r := range ins {
			if k, ok := idKey(r); ok {
				inss[k] = append(inss[k], r)
			}
		}
		for k, ds := range dels {
			// one old and one new row per key: an update; several are
			// left as deletes and inserts
			if is := inss[k]; len(ds) == 1 && len(is) == 1 {
				kind[ds[0]], kind[is[0]] = 1, 2
			}
		}
	}
	var out []arrow.RecordBatch
	commitTime := arrow.Timestamp(s.TimestampMs * 1000)
	for t, typ := range changeTypes {
		for bi, b := range batches {
			var idx []int64
			for r := range int(b.NumRows()) {
				if k, ok := kind[changeRow{bi, r}]; ok && k == t {
					idx = append(idx, int64(r))
				}
			}
			if len(idx) == 0 {
				continue
			}
			ob, err := f.take(ctx, mem, b, idx, typ, s.SnapshotID, s.SequenceNumber, commitTime)
			if err != nil {
				for _, x := range out {
					x.Release()
				}
				return nil, fmt.Errorf("table_changes(%s): %w", f.name, err)
			}
			out = append(out, ob)
		}
	}
	return out, nil
}

// take builds one output batch: rows idx of b and the change columns.
func (f *changeFeed) take(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch, idx []int64, typ string, snapID, seq int64, at arrow.Timestamp) (arrow.RecordBatch, error) {
	ib := array.NewInt64Builder(mem)
	ib.AppendValues(idx, nil)
	indices := ib.NewArray()
	ib.Release()
	defer indices.Release()
	taken, err := compute.TakeArray(compute.WithAllocator(ctx, mem), b.Columns()[0], indices)
	if err != nil {
		return nil, err
	}
	cols := []arrow.Array{taken}
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, c := range b.Columns()[1:f.nt] {
		x, err := compute.TakeArray(compute.WithAllocator(ctx, mem), c, indices)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, x)
	}
	n := len(idx)
	sb := array.NewStringBuilder(mem)
	ab := array.NewInt64Builder(mem)
	qb := array.NewInt64Builder(mem)
	tb := array.NewTimestampBuilder(mem, tTimestampTZ)
	for range n {
		sb.Append(typ)
		ab.Append(snapID)
		qb.Append(seq)
		tb.Append(at)
	}
	for _, bl := range []array.Builder{sb, ab, qb, tb} {
		cols = append(cols, bl.NewArray())
		bl.Release()
	}
	out := array.NewRecordBatch(f.out, cols, int64(n))
	release()
	return out, nil
}

// deleteSet identifies the delete files that apply to a task.
func deleteSet(t table.FileScanTask) string {
	var ks []string
	for _, g := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
		for _, df := range g {
			ks = append(ks, mergeinto.DeleteKey(df))
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, "\x01")
}

func sortedKeys(m map[string]table.FileScanTask) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

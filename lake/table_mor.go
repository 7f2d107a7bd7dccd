package lake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	skscan "github.com/skadedb/skade/scan"
)

// Merge-on-read writes: equality deletes and new rows committed together
// as one Iceberg row delta. None of them reads a target data file; the
// deletes are applied by readers (iceberg-go's scan applies equality and
// position deletes), and Compact folds them back into the data files.
//
// INVARIANT: an equality delete applies only to data files with a lower
// sequence number than its own, so rows added in the same snapshot as the
// deletes survive them. That is what makes Upsert one snapshot.

// RowDelta collects equality deletes and appends to commit as one
// snapshot. Build it with Table.NewRowDelta, add steps, then Commit. The
// readers given to DeleteEquality and Append are read during Commit and
// belong to the caller (release them afterwards).
type RowDelta struct {
	t     *Table
	steps []deltaStep
}

type deltaStep struct {
	keyColumns []string // nil for an append
	rdr        array.RecordReader
}

// NewRowDelta starts a row delta on the table's current snapshot.
func (t *Table) NewRowDelta() *RowDelta { return &RowDelta{t: t} }

// DeleteEquality deletes every row whose keyColumns equal those of a row
// of keys, without reading the table's data files. On a partitioned table
// the keys must also carry the partition source columns, and a delete
// reaches only rows of the partition those values name.
func (d *RowDelta) DeleteEquality(keyColumns []string, keys array.RecordReader) *RowDelta {
	d.steps = append(d.steps, deltaStep{keyColumns: append([]string{}, keyColumns...), rdr: keys})
	return d
}

// Append adds the records as new rows. Deletes in the same delta do not
// apply to them.
func (d *RowDelta) Append(records array.RecordReader) *RowDelta {
	d.steps = append(d.steps, deltaStep{rdr: records})
	return d
}

// DeleteEquality deletes every row whose keyColumns equal those of a row
// of keys, in one snapshot, reading no data file of the table. Key columns
// cannot be floating-point (Iceberg's rule for equality deletes).
func (t *Table) DeleteEquality(ctx context.Context, keyColumns []string, keys array.RecordReader, opts ...WriteOption) (*Table, error) {
	return t.NewRowDelta().DeleteEquality(keyColumns, keys).commit(ctx, "delete from", opts)
}

// Upsert replaces the rows whose keyColumns match a record's with the
// records, and inserts the records that match nothing, as one snapshot
// and without reading any data file of the table: it writes an equality
// delete for each record's key plus the records as new rows. A key that
// appears twice among the records is refused. The records are held in
// memory until the commit. The deletes and the rows are written at once;
// from 800,000 records the rows go to one writer per 400,000 (at most
// one per core, and 4), each writing its own data files.
//
// On a partitioned table every partition source column must be a key
// column: an equality delete reaches only rows in its own partition, so a
// row whose partition value the upsert changed would otherwise survive.
//
// A format-version 3 table is refused. It keeps row lineage: an updated
// row keeps its _row_id. A blind equality delete cannot know which rows,
// and so which ids, it replaces, so every upserted row would take a new
// id. MERGE … WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT
// * reads the key columns (pruned by statistics) and keeps them, with
// deletion vectors under write.merge.mode = 'merge-on-read'.
func (t *Table) Upsert(ctx context.Context, keyColumns []string, records array.RecordReader, opts ...WriteOption) (*Table, error) {
	if v := t.tbl.Metadata().Version(); v >= 3 {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("upsert into %s: a format-version %d table keeps row lineage, which an equality-delete upsert would lose (every upserted row would take a new _row_id); use MERGE INTO %s USING … ON … WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *, which keeps it", t.Name(), v, t.Name())}
	}
	sc := t.icebergSchema()
	spec := t.tbl.Metadata().PartitionSpec()
	for _, pf := range spec.Fields() {
		f, ok := sc.FindFieldByID(pf.SourceID())
		if ok && !slices.Contains(keyColumns, f.Name) {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("upsert into %s: the table is partitioned by %q, which is not a key column; an equality delete reaches only rows of its own partition, so a row whose %q changed would survive; add %q to the key columns, or use MERGE", t.Name(), f.Name, f.Name, f.Name)}
		}
	}
	d := t.NewRowDelta()
	d.steps = append(d.steps, deltaStep{keyColumns: append([]string{}, keyColumns...), rdr: records}, deltaStep{rdr: nil /* same records */})
	return d.commit(ctx, "upsert into", opts)
}

// Commit writes every step's files and commits them as one snapshot. A
// delta with no rows at all commits nothing and returns the table as is.
func (d *RowDelta) Commit(ctx context.Context, opts ...WriteOption) (*Table, error) {
	return d.commit(ctx, "row delta on", opts)
}

// reusedByNext reports whether step i's records are also the next
// step's rows: an upsert's equality deletes and its append.
func (d *RowDelta) reusedByNext(i int) bool {
	return i+1 < len(d.steps) && d.steps[i+1].rdr == nil
}

// materialized is one step's input, read into memory: the delta writes
// files inside the transaction, and an upsert reads its records twice.
type materialized struct {
	keyIDs  []int
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	rows    int64
}

func (m *materialized) release() {
	for _, b := range m.batches {
		b.Release()
	}
	m.batches = nil
}

func (d *RowDelta) commit(ctx context.Context, op string, opts []WriteOption) (*Table, error) {
	t := d.t
	cfg := writeConfig{props: iceberg.Properties{}}
	for _, o := range opts {
		o(&cfg)
	}
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	if len(d.steps) == 0 {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s %s: the row delta is empty; add DeleteEquality or Append steps before Commit", op, t.Name())}
	}
	var mats []*materialized
	defer func() {
		for _, m := range mats {
			m.release()
		}
	}()
	// an upsert's keys must be unique in its records: checked beside the
	// writes, which a duplicate stops, and the failed commit removes their
	// files (checkUniqueKeys took about 8 ms of a 1.1M-row upsert's
	// 115-150, first and on one core)
	var checks []func() error
	var total int64
	for i, s := range d.steps {
		if s.rdr == nil {
			// Upsert's append step reuses the previous step's records.
			prev := mats[i-1]
			mats = append(mats, &materialized{schema: prev.schema, batches: retainBatches(prev.batches), rows: prev.rows})
			continue
		}
		var keyIDs []int
		if s.keyColumns != nil {
			ids, err := t.equalityKeyIDs(s.keyColumns, s.rdr.Schema())
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", op, t.Name(), err)
			}
			keyIDs = ids
		}
		if s.keyColumns == nil || d.reusedByNext(i) {
			if err := checkSchemaForWrite(t.icebergSchema(), s.rdr.Schema()); err != nil {
				return nil, fmt.Errorf("%s %s: %w", op, t.Name(), err)
			}
		}
		m, err := readAll(ctx, s.rdr)
		if m != nil {
			mats = append(mats, m)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: reading the input: %w", op, t.Name(), err)
		}
		// an append's records (an upsert's too) get the table's whole
		// layout; an equality delete's keep their own columns
		fill := s.keyColumns == nil || d.reusedByNext(i)
		if err := conformMaterialized(ctx, t.Name(), t.icebergSchema(), m, fill); err != nil {
			return nil, fmt.Errorf("%s %s: %w", op, t.Name(), err)
		}
		m.keyIDs = keyIDs
		total += m.rows
		if keyIDs != nil && d.reusedByNext(i) {
			cols := s.keyColumns
			checks = append(checks, func() error {
				if err := checkUniqueKeys(m, cols); err != nil {
					return &sentinelError{ErrInvalidArgument, fmt.Errorf("%s %s: %w", op, t.Name(), err)}
				}
				return nil
			})
		}
	}
	if total == 0 {
		return t, nil
	}
	cfg.props["skade.operation"] = strings.ReplaceAll(op, " ", "-")
	equality := slices.ContainsFunc(mats, func(m *materialized) bool { return m.keyIDs != nil && m.rows > 0 })
	return t.commitWrite(ctx, op, cfg, func(txn *table.Transaction) (err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		checked := make(chan error, 1)
		go func() {
			var err error
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("checking the keys: %v", r)
					cancel()
				}
				checked <- err
			}()
			for _, c := range checks {
				if err = c(); err != nil {
					cancel() // the writes are moot
					return
				}
			}
		}()
		// the check reads the records, which outlive this call only until
		// commit returns: every way out waits for it, and its failure
		// comes first
		wait := sync.OnceValue(func() error { return <-checked })
		defer func() {
			if e := wait(); e != nil {
				err = e
			}
		}()
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		if equality {
			if err := equalityDeletesReachAll(ctx, staged.Table, op, t.Name()); err != nil {
				return err
			}
		}
		rd := txn.NewRowDelta(cfg.props)
		// An upsert's equality deletes are its data files' key columns,
		// copied from each data file once it is written
		// (mergeinto.EqualityDeletesOf): copied[j] is the step whose deletes
		// the data files of step j give.
		copied := map[int]int{}
		for i, m := range mats {
			if m.keyIDs != nil && m.rows > 0 && d.reusedByNext(i) && !testUpsertEncodesKeys.Load() {
				copied[i+1] = i
			}
		}
		// Each step's files are written on a goroutine of their own (an
		// upsert's equality deletes, when not copied, beside its rows);
		// neither touches the transaction, and the files join the delta in
		// step order.
		type written struct {
			files   []iceberg.DataFile
			deletes []iceberg.DataFile // copied from files
			// a file whose keys could not be copied: the deletes are
			// written from the records after all
			uncopied bool
			err      error
		}
		// A step of many rows is written by several writers at once, each
		// taking a contiguous share (as a MERGE's inserts are), so that an
		// upsert's rows do not leave a core idle once its smaller
		// equality-delete file is done.
		var jobs []deltaJob
		defer func() {
			for _, j := range jobs {
				for _, b := range j.share {
					b.Release()
				}
			}
		}()
		for i, m := range mats {
			if m.rows == 0 {
				continue
			}
			if m.keyIDs != nil {
				if s, ok := copied[i+1]; !ok || s != i {
					jobs = append(jobs, deltaJob{step: i})
				}
				continue
			}
			k := int(min(int64(runtime.GOMAXPROCS(0)), 4, max(1, m.rows/rowsPerDataWriter)))
			for _, sh := range splitRows(m.batches, m.rows, k) {
				jobs = append(jobs, deltaJob{step: i, share: sh})
			}
		}
		writeEqualityDeletes := func(m *materialized) ([]iceberg.DataFile, error) {
			spec := t.tbl.Metadata().PartitionSpec()
			proj := projectKeys(m, t.icebergSchema(), &spec, m.keyIDs)
			files, err := txn.WriteEqualityDeletes(ctx, m.keyIDs, skscan.DetachingSeq(staged.Table.Metadata(), batchSeq(ctx, proj, false /* retain */)))
			for _, b := range proj {
				b.Release()
			}
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				return nil, fmt.Errorf("writing equality deletes: %w", err)
			}
			return files, nil
		}
		outs := make([]written, len(jobs))
		var wg sync.WaitGroup
		for ji, job := range jobs {
			m := mats[job.step]
			wg.Go(func() {
				o := &outs[ji]
				if m.keyIDs != nil {
					o.files, o.err = writeEqualityDeletes(m)
					return
				}
				eqStep, copying := copied[job.step]
				for df, err := range mergeinto.WriteRecords(ctx, staged.Table, m.schema, batchSeq(ctx, job.share, true /* retain */), 0 /* the table's target size */) {
					if err != nil {
						o.err = fmt.Errorf("writing data files: %w", err)
						return
					}
					o.files = append(o.files, df)
					if !copying || o.uncopied {
						continue
					}
					eq, ok, err := mergeinto.EqualityDeletesOf(ctx, staged.Table, df, mats[eqStep].keyIDs)
					if err != nil {
						o.err = fmt.Errorf("writing equality deletes: %w", err)
						return
					}
					if ok {
						o.deletes = append(o.deletes, eq)
					} else {
						o.uncopied = true
					}
				}
			})
		}
		wg.Wait()
		if err := wait(); err != nil {
			return err
		}
		n := 0
		var errs []error
		var deletes []iceberg.DataFile
		fallback := map[int]bool{} // the steps whose copied deletes are dropped
		for ji, o := range outs {
			if o.err != nil {
				errs = append(errs, o.err)
			}
			if eqStep, ok := copied[jobs[ji].step]; ok && o.uncopied {
				fallback[eqStep] = true
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for ji, o := range outs {
			if mats[jobs[ji].step].keyIDs != nil {
				rd.AddDeletes(o.files...)
			} else {
				rd.AddRows(o.files...)
			}
			n += len(o.files)
			if eqStep, ok := copied[jobs[ji].step]; ok && fallback[eqStep] {
				if err := removeFiles(ctx, staged.Table, o.deletes); err != nil {
					return err
				}
				continue
			}
			deletes = append(deletes, o.deletes...)
		}
		for i := range fallback {
			files, err := writeEqualityDeletes(mats[i])
			if err != nil {
				return err
			}
			deletes = append(deletes, files...)
		}
		rd.AddDeletes(deletes...)
		n += len(deletes)
		if err := ctx.Err(); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("no files were written for a non-empty input (broken invariant)")
		}
		return rd.Commit(ctx)
	})
}

// deltaJob is one writer's work in a row delta: a step's equality
// deletes, or a share of a step's rows (its own references).
type deltaJob struct {
	step  int
	share []arrow.RecordBatch
}

// rowsPerDataWriter is how many rows make another writer of a delta's
// rows worth its extra file, as for a MERGE's inserts. Tests lower it.
var rowsPerDataWriter int64 = 400_000

// splitRows cuts batches of rows rows in all into k contiguous shares of
// about rows/k rows, slicing the batches the cuts fall in. Each share
// holds references of its own (release them); empty batches are left
// out.
func splitRows(batches []arrow.RecordBatch, rows int64, k int) [][]arrow.RecordBatch {
	shares := make([][]arrow.RecordBatch, k)
	per := (rows + int64(k) - 1) / int64(k)
	s, filled := 0, int64(0)
	for _, b := range batches {
		n := b.NumRows()
		for off := int64(0); off < n; {
			take := n - off
			if s < k-1 {
				take = min(take, per-filled)
			}
			if off == 0 && take == n {
				b.Retain()
				shares[s] = append(shares[s], b)
			} else {
				shares[s] = append(shares[s], b.NewSlice(off, off+take))
			}
			off += take
			if filled += take; filled >= per && s < k-1 {
				s, filled = s+1, 0
			}
		}
	}
	return shares
}

// equalityKeyIDs resolves key column names to field ids and checks that
// they can serve as equality-delete keys and that the input carries them.
func (t *Table) equalityKeyIDs(keyColumns []string, in *arrow.Schema) ([]int, error) {
	if len(keyColumns) == 0 {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("no key columns given; name the columns that identify a row, e.g. []string{\"id\"}")}
	}
	sc := t.icebergSchema()
	seen := map[string]bool{}
	ids := make([]int, 0, len(keyColumns))
	for _, c := range keyColumns {
		f, ok := sc.FindFieldByName(c)
		if !ok {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("key column %q is not in the table; the table's columns are %s", c, columnList(sc))}
		}
		if seen[f.Name] {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("key column %q is named twice", c)}
		}
		seen[f.Name] = true
		switch f.Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("key column %q is %s: Iceberg cannot use floating-point columns as equality-delete keys; use an integer, string, date or timestamp key", c, f.Type)}
		case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("key column %q is %s: equality-delete keys must be primitive columns", c, f.Type)}
		}
		if len(in.FieldIndices(f.Name)) == 0 {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("key column %q is missing from the input records", c)}
		}
		ids = append(ids, f.ID)
	}
	// A partitioned table routes deletes by partition, so the keys must
	// carry the partition source columns too.
	spec := t.tbl.Metadata().PartitionSpec()
	for _, pf := range spec.Fields() {
		f, ok := sc.FindFieldByID(pf.SourceID())
		if ok && len(in.FieldIndices(f.Name)) == 0 {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("the table is partitioned by %q, so the input records must include that column too", f.Name)}
		}
	}
	return ids, nil
}

// projectKeys keeps the key columns and the partition source columns of
// the batches, in table order. The caller releases the result.
func projectKeys(m *materialized, sc *iceberg.Schema, spec *iceberg.PartitionSpec, keyIDs []int) []arrow.RecordBatch {
	want := map[int]bool{}
	for _, id := range keyIDs {
		want[id] = true
	}
	for _, pf := range spec.Fields() {
		want[pf.SourceID()] = true
	}
	var fields []arrow.Field
	var idx []int
	for _, f := range sc.Fields() {
		if !want[f.ID] {
			continue
		}
		// equalityKeyIDs checked that every wanted column is present.
		i := m.schema.FieldIndices(f.Name)[0]
		fields = append(fields, m.schema.Field(i))
		idx = append(idx, i)
	}
	schema := arrow.NewSchema(fields, nil)
	out := make([]arrow.RecordBatch, 0, len(m.batches))
	for _, b := range m.batches {
		cols := make([]arrow.Array, len(idx))
		for j, i := range idx {
			cols[j] = b.Column(i)
		}
		out = append(out, array.NewRecordBatch(schema, cols, b.NumRows()))
	}
	return out
}

// checkUniqueKeys refuses an upsert whose records repeat a key: both rows
// would survive, and the table would hold the key twice. The error names
// the key of the first row that repeats an earlier row's key.
//
// A key of one integer column is checked against a bitmap of its values
// (firstRepeatedInt). Other keys are checked by their 64-bit hashes (the
// executor's row keys: NULL is a value here, equal to NULL, as an
// equality delete matches it), and only on equal hashes the keys
// themselves. The hashes are first split into 2^uniqueBits partitions by
// their top bits, and each partition is checked with one small table,
// reused, that stays in the CPU cache. One large table took half an
// upsert's time in cache misses and page faults.
func checkUniqueKeys(m *materialized, keyColumns []string) error {
	idx := make([]int, len(keyColumns))
	types := make([]arrow.DataType, len(keyColumns))
	for i, c := range keyColumns {
		idx[i] = m.schema.FieldIndices(c)[0]
		types[i] = m.schema.Field(idx[i]).Type
	}
	dup, ok := int32(-1), false
	if len(idx) == 1 {
		dup, ok = firstRepeatedInt(m, idx[0])
	}
	if !ok {
		var err error
		if dup, err = firstRepeatedHashed(m, idx, types); err != nil {
			return err
		}
	}
	if dup < 0 {
		return nil
	}
	b, r := locateRow(m, dup)
	if b == nil {
		return fmt.Errorf("row %d is past the records' end (broken invariant)", dup)
	}
	var sb strings.Builder
	for i, c := range idx {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s=%s", keyColumns[i], b.Column(c).ValueStr(int(r)))
	}
	return fmt.Errorf("key (%s) appears more than once in the records; de-duplicate them first", sb.String())
}

// locateRow is the batch of m that holds row r (counted across batches)
// and r's row in it, or nil.
func locateRow(m *materialized, r int32) (arrow.RecordBatch, int64) {
	for _, b := range m.batches {
		if int64(r) < b.NumRows() {
			return b, int64(r)
		}
		r -= int32(b.NumRows())
	}
	return nil, 0
}

// firstRepeatedHashed is checkUniqueKeys by hashes: the first row that
// repeats an earlier row's key, or -1.
func firstRepeatedHashed(m *materialized, idx []int, types []arrow.DataType) (int32, error) {
	enc, err := exec.NewKeyEncoder(types)
	if err != nil {
		return -1, err
	}
	var keys exec.RowKeys
	cols := make([]arrow.Array, len(idx))
	encode := func(b arrow.RecordBatch, from, to int64) error {
		for i, c := range idx {
			cols[i] = b.Column(c)
			if from > 0 || to < b.NumRows() {
				cols[i] = array.NewSlice(cols[i], from, to)
			}
		}
		err := enc.Encode(cols, &keys)
		if from > 0 || to < b.NumRows() {
			for _, c := range cols {
				c.Release()
			}
		}
		return err
	}
	// every row's hash, in row order, and how many fall in each partition
	hashes := make([]uint64, 0, m.rows)
	var count [1 << uniqueBits]int
	for _, b := range m.batches {
		if err := encode(b, 0, b.NumRows()); err != nil {
			return -1, err
		}
		for _, h := range keys.Hashes[:keys.N] {
			count[h>>(64-uniqueBits)]++
		}
		hashes = append(hashes, keys.Hashes[:keys.N]...)
	}
	// each row's hash and number, grouped by partition: the check below
	// then reads one partition's entries, in the cache, not the hashes
	// of all rows at random
	type entry struct {
		h uint64
		r int32
	}
	var start [1<<uniqueBits + 1]int
	for p, c := range count {
		start[p+1] = start[p] + c
	}
	fill := start
	entries := make([]entry, len(hashes))
	for r, h := range hashes {
		p := h >> (64 - uniqueBits)
		entries[fill[p]] = entry{h, int32(r)}
		fill[p]++
	}
	// a row's key, for comparing two keys whose hashes are equal
	key := func(r int32) ([]byte, error) {
		b, i := locateRow(m, r)
		if b == nil {
			return nil, fmt.Errorf("row %d is past the records' end (broken invariant)", r)
		}
		if err := encode(b, i, i+1); err != nil {
			return nil, err
		}
		return slices.Clone(keys.Key(0)), nil
	}
	dup := int32(-1)  // the first row that repeats an earlier row's key
	var slots []int32 // entry+1 per slot, 0 when empty
	for p := range count {
		part := entries[start[p]:start[p+1]]
		n := 16
		for n < 2*len(part) {
			n *= 2
		}
		if cap(slots) < n {
			slots = make([]int32, n)
		}
		slots = slots[:n]
		clear(slots)
		mask := uint64(n - 1)
		for e, x := range part {
			i := x.h & mask
			for ; slots[i] != 0; i = (i + 1) & mask {
				o := part[slots[i]-1]
				if o.h != x.h {
					continue
				}
				a, err := key(o.r)
				if err != nil {
					return -1, err
				}
				b, err := key(x.r)
				if err != nil {
					return -1, err
				}
				if bytes.Equal(a, b) {
					// part is in row order: x.r is the later of the two
					if dup < 0 || x.r < dup {
						dup = x.r
					}
					break
				}
			}
			if slots[i] == 0 {
				slots[i] = int32(e) + 1
			}
		}
	}
	return dup, nil
}

// firstRepeatedInt is checkUniqueKeys for a key of one integer column
// (BIGINT, INTEGER, DATE, TIMESTAMP): the first row whose value (or NULL)
// an earlier row holds, or -1, found with one bit per value
// (exec.BlockBits), so that keys in a few narrow ranges (ids, new ids
// past the old) need about one bit each. ok is false, nothing checked,
// for other keys and for values so spread that the directory would pass
// one entry per row or the blocks 64 bits per row (with room for 1,024
// of each whatever the rows); then the hashes decide.
func firstRepeatedInt(m *materialized, col int) (dup int32, ok bool) {
	switch m.schema.Field(col).Type.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		return firstRepeatedOf[int64](m, col)
	case arrow.INT32, arrow.DATE32:
		return firstRepeatedOf[int32](m, col)
	}
	return -1, false
}

func firstRepeatedOf[T int32 | int64](m *materialized, col int) (int32, bool) {
	// the smallest and largest value, and how many rows
	var lo, hi int64
	seen := false
	for _, b := range m.batches {
		a := b.Column(col)
		vals := arrow.GetValues[T](a.Data(), 1)
		if len(vals) < a.Len() {
			return -1, false // no value buffer (all NULL): the hashes decide
		}
		nulls := a.NullN() > 0
		for i, v := range vals[:a.Len()] {
			if nulls && a.IsNull(i) {
				continue
			}
			if !seen {
				lo, hi, seen = int64(v), int64(v), true
			}
			lo, hi = min(lo, int64(v)), max(hi, int64(v))
		}
	}
	// the directory at most one entry per row, the blocks 64 bits per
	// row, with room for 1,024 of each whatever the rows
	rows := max(uint64(m.rows), 1024)
	set := exec.NewBlockBits(uint64(hi)-uint64(lo), rows, rows) // hi >= lo: no wrap as unsigned
	if set == nil {
		return -1, false
	}
	nullRow := false
	row := int32(0)
	for _, b := range m.batches {
		a := b.Column(col)
		vals := arrow.GetValues[T](a.Data(), 1)
		nulls := a.NullN() > 0
		for i, v := range vals[:a.Len()] {
			r := row + int32(i)
			if nulls && a.IsNull(i) {
				if nullRow {
					return r, true
				}
				nullRow = true
				continue
			}
			had, ok := set.Add(uint64(int64(v)) - uint64(lo))
			if !ok {
				return -1, false // past 64 bits per row
			}
			if had {
				return r, true
			}
		}
		row += int32(a.Len())
	}
	return -1, true
}

// uniqueBits is log2 of checkUniqueKeys's partitions: 1M keys make
// partitions of 4,000, whose table of 32 KiB stays in the L1/L2 cache.
const uniqueBits = 8

func readAll(ctx context.Context, rdr array.RecordReader) (*materialized, error) {
	m := &materialized{schema: rdr.Schema()}
	for rdr.Next() {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		b := rdr.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		m.batches = append(m.batches, b)
		m.rows += b.NumRows()
	}
	return m, rdr.Err()
}

func retainBatches(bs []arrow.RecordBatch) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(bs))
	for i, b := range bs {
		b.Retain()
		out[i] = b
	}
	return out
}

// batchSeq yields the batches, stopping early if ctx is done (the caller
// then checks ctx). It never yields an error: iceberg-go's delete writer
// panics on one. With retain, each yielded batch gets a reference for the
// consumer to release (table.WriteRecords releases what it consumes); the
// equality-delete writer takes its own references instead.
func batchSeq(ctx context.Context, bs []arrow.RecordBatch, retain bool) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range bs {
			if ctx.Err() != nil {
				return
			}
			if retain {
				b.Retain()
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// equalityDeletesReachAll refuses equality deletes on a table whose live
// data files were not all written with its current partition spec. An
// equality delete reaches only data files of its own spec and partition,
// so after ALTER TABLE … PARTITION FIELD the rows in older files would
// survive a delete of their key, silently.
func equalityDeletesReachAll(ctx context.Context, tbl *table.Table, op, name string) error {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return err
	}
	cur := int32(tbl.Metadata().DefaultPartitionSpec())
	for _, m := range manifests {
		if m.ManifestContent() == iceberg.ManifestContentData && m.PartitionSpecID() != cur && (m.HasAddedFiles() || m.HasExistingFiles()) {
			return &sentinelError{ErrInvalidArgument, fmt.Errorf("%s %s: the table holds data files written with an earlier partition spec (%d; the current one is %d), which equality deletes would not reach; compact the table first (ALTER TABLE %s EXECUTE compact rewrites them into the current spec), or use MERGE", op, name, m.PartitionSpecID(), cur, name)}
		}
	}
	return nil
}

// testUpsertEncodesKeys, when set (by tests only), writes an upsert's
// equality deletes from its records instead of copying its data files'
// key columns: the write the copies are compared with.
var testUpsertEncodesKeys atomic.Bool

// removeFiles removes files, written by this write into tbl and dropped
// from it.
func removeFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) error {
	if len(files) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := fsys.Remove(f.FilePath()); err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}

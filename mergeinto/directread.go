package mergeinto

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
)

// Direct reads. A MERGE read key columns first (readKeyFirst) reads the
// row groups a key hit without their key columns, which the probe kept
// (fileKeys). Those row groups are read here through pqarrow, from the
// footer the merge already holds, rather than through iceberg-go's scan:
// a string column whose every data page is dictionary-encoded is read as
// its dictionary and indices and made a string array in one pass
// (scan.DictStrings), where arrow-go's string reader appends each value to a
// builder (BENCHMARKS.md, session 29: a tenth of a spread MERGE's CPU for
// one such column).
//
// A file qualifies (directColumns) when its schema is flat, every column
// has a field id (the scan maps the columns of a file without them by
// name), and each target column other than the keys is a primitive the
// file holds as a top-level column with its field id and a type equal to
// the target's or a lossless widening of it (scan.DirectCastable), or lacks
// without an initial default or a partition value (read as NULL, as
// iceberg-go's scan reads it). Its columns are cast to the target's types as conform casts
// iceberg-go's. Files with deletes never get here (rowGroupLayout).

// directColumn is how one target column is read directly.
type directColumn struct {
	leaf int  // the file's leaf column; -1: not in the file (NULL)
	dict bool // read as dictionary and made strings (scan.DictStrings)
}

// directColumns plans the direct read of task's file (footer meta): one
// entry per target column (keys: leaf -1, spliced by the caller; the
// columns skip marks: leaf -1, left NULL); nil when the file does not
// qualify.
func (m *merger) directColumns(task table.FileScanTask, meta *metadata.FileMetaData, skip []bool) []directColumn {
	// the types pqarrow reads the file's columns as (no dictionaries)
	leafOf, as, ok := scan.FlatLeaves(meta)
	if !ok {
		return nil
	}
	sch := m.spec.Target.Schema()
	out := make([]directColumn, m.p.target.NumFields())
	for c := range out {
		out[c].leaf = -1
		if slices.Contains(m.p.keyCols, c) || skip != nil && skip[c] {
			continue
		}
		f := m.p.target.Field(c)
		field, ok := sch.FindFieldByName(f.Name)
		if !ok {
			return nil
		}
		if _, primitive := field.Type.(iceberg.PrimitiveType); !primitive {
			return nil
		}
		if i, ok := leafOf[int32(field.ID)]; ok {
			// (a repeated top-level leaf reads as a list, which no
			// primitive is castable from)
			if !scan.DirectCastable(as.Field(i).Type, f.Type) {
				return nil
			}
			out[c].leaf = i
			out[c].dict = f.Type.ID() == arrow.STRING && meta.Schema.Column(i).PhysicalType() == parquet.Types.ByteArray && scan.AllDictPages(meta, i, nil)
		}
		if out[c].leaf < 0 && (field.InitialDefault != nil || scan.IdentitySource(m.spec.Target.Metadata(), task.File, field.ID)) {
			return nil // the scan reads the default or the partition value, not NULL
		}
	}
	if !slices.ContainsFunc(out, func(dc directColumn) bool { return dc.leaf >= 0 }) {
		return nil // nothing to read
	}
	return out
}

// readDirect reads the row groups runs ([from, to) row group indices,
// ascending) of task's file (footer meta) as planned by cols, calling fn
// with each batch in the target layout, key columns NULL, until fn
// returns false or an error.
func (m *merger) readDirect(ctx context.Context, task table.FileScanTask, meta *metadata.FileMetaData, cols []directColumn, runs [][2]int, fn func(arrow.RecordBatch) (bool, error)) error {
	fail := func(err error) error {
		return fmt.Errorf("%s: reading data file %s: %w", m.what(), m.relPath(task.File.FilePath()), err)
	}
	if !slices.ContainsFunc(cols, func(dc directColumn) bool { return dc.leaf >= 0 }) {
		return m.readNone(ctx, meta, runs, fn)
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return fail(err)
	}
	src, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	pr, err := file.NewParquetReader(src, file.WithMetadata(meta))
	if err != nil {
		return fail(err)
	}
	defer pr.Close()
	props := pqarrow.ArrowReadProperties{Parallel: true, BatchSize: int64(scan.ReadBatchRows(m.opts.BatchSize))}
	var leaves []int
	at := make([]int, len(cols)) // each column's place among the leaves read
	for c, dc := range cols {
		at[c] = -1
		if dc.leaf >= 0 {
			at[c] = len(leaves)
			leaves = append(leaves, dc.leaf)
			props.SetReadDict(dc.leaf, dc.dict)
		}
	}
	ts := m.writeSchema()
	prog := exec.ProgressFrom(ctx)
	// read reads one run; an error of fn's is returned as it is, one of
	// the read's wrapped by fail
	read := func(rr pqarrow.RecordReader) (bool, error) {
		defer rr.Release()
		for rr.Next() {
			rec := rr.RecordBatch()
			n := rec.NumRows()
			out := make([]arrow.Array, ts.NumFields())
			for c, f := range ts.Fields() {
				if c >= len(cols) || at[c] < 0 {
					out[c] = m.nullArray(f.Type, int(n))
					continue
				}
				a, err := directArray(ctx, rec.Column(at[c]), f.Type, cols[c].dict)
				if err != nil {
					releaseAll(out)
					return false, fail(fmt.Errorf("column %q: %w", f.Name, err))
				}
				out[c] = a
			}
			prog.AddRows(n)
			tb := newBatch(ts, out, n)
			more, err := fn(tb)
			tb.Release()
			if err != nil || !more {
				return false, err
			}
		}
		if err := rr.Err(); err != nil {
			return false, fail(err)
		}
		return true, nil
	}
	fr, err := pqarrow.NewFileReader(pr, props, scan.ReadBuffers)
	if err != nil {
		return fail(err)
	}
	for _, r := range runs {
		groups := make([]int, 0, r[1]-r[0])
		for g := r[0]; g < r[1]; g++ {
			groups = append(groups, g)
		}
		rr, err := fr.GetRecordReader(ctx, leaves, groups)
		if err != nil {
			return fail(err)
		}
		if more, err := read(rr); err != nil || !more {
			return err
		}
	}
	return nil
}

// readNone is readDirect of no column (a sparse file's whose statement
// reads nothing but the keys, which the caller splices in): batches of
// the runs' rows, every column NULL, a row group at a time.
func (m *merger) readNone(ctx context.Context, meta *metadata.FileMetaData, runs [][2]int, fn func(arrow.RecordBatch) (bool, error)) error {
	ts := m.writeSchema()
	size := int64(scan.ReadBatchRows(m.opts.BatchSize))
	prog := exec.ProgressFrom(ctx)
	for _, r := range runs {
		for g := r[0]; g < r[1]; g++ {
			rows := meta.RowGroups[g].NumRows
			for off := int64(0); off < rows; off += size {
				if err := ctx.Err(); err != nil {
					return err
				}
				n := min(size, rows-off)
				out := make([]arrow.Array, ts.NumFields())
				for c, f := range ts.Fields() {
					out[c] = m.nullArray(f.Type, int(n))
				}
				prog.AddRows(n)
				tb := newBatch(ts, out, n)
				more, err := fn(tb)
				tb.Release()
				if err != nil || !more {
					return err
				}
			}
		}
	}
	return nil
}

// directArray is a, a column read directly, as the target's type typ: a
// dictionary made strings, another type cast as conform casts.
func directArray(ctx context.Context, a arrow.Array, typ arrow.DataType, dict bool) (arrow.Array, error) {
	if d, ok := a.(*array.Dictionary); ok && dict {
		s, err := scan.DictStrings(scan.ReadBuffers, d, nil)
		if err != nil {
			return nil, err
		}
		a = s
		defer s.Release()
	}
	return scan.CastTo(ctx, a, typ)
}

package scan

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Helpers of the reads that go through pqarrow from a footer held, not
// through iceberg-go's scan: a MERGE's direct reads (mergeinto's
// directread.go) and a query's dictionary-filtered reads (dictread.go).

// DirectCastable reports whether a column pqarrow reads as from is read
// directly for a column of type to: the same type, or a widening that
// loses nothing (a column whose type was widened after the file was
// written). Anything else (INT96 timestamps, UUIDs, another unit) goes
// through iceberg-go's scan, which knows Iceberg's conversions.
func DirectCastable(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) {
		return true
	}
	switch to.ID() {
	case arrow.INT64:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32:
			return true
		}
	case arrow.INT32:
		switch from.ID() {
		case arrow.INT8, arrow.INT16:
			return true
		}
	case arrow.FLOAT64:
		return from.ID() == arrow.FLOAT32
	case arrow.DECIMAL128:
		f, ok := from.(arrow.DecimalType)
		t := to.(arrow.DecimalType)
		return ok && f.GetScale() == t.GetScale() && f.GetPrecision() <= t.GetPrecision()
	}
	return false
}

// FlatLeaves maps the field ids of a flat file (footer meta: every column
// a top-level leaf, each with a field id) to their leaves, the first leaf
// of an id that several carry; as is the Arrow schema pqarrow reads the
// file with (no dictionaries). ok is false where the file is not so: its
// columns are then mapped by name or nested, which iceberg-go's scan
// knows.
func FlatLeaves(meta *metadata.FileMetaData) (leafOf map[int32]int, as *arrow.Schema, ok bool) {
	if meta == nil || meta.Schema.Root().NumFields() != meta.Schema.NumColumns() {
		return nil, nil, false // not flat
	}
	leafOf = make(map[int32]int, meta.Schema.NumColumns())
	for i := range meta.Schema.NumColumns() {
		id := meta.Schema.Column(i).SchemaNode().FieldID()
		if id < 0 {
			return nil, nil, false
		}
		if _, seen := leafOf[id]; !seen {
			leafOf[id] = i
		}
	}
	as, err := pqarrow.FromParquet(meta.Schema, &pqarrow.ArrowReadProperties{}, meta.KeyValueMetadata())
	if err != nil || as.NumFields() != meta.Schema.NumColumns() {
		return nil, nil, false
	}
	return leafOf, as, true
}

// AllDictPages reports whether every data page of leaf column i in the
// row groups groups of meta (every row group when groups is nil) is
// dictionary-encoded, by the chunks' page encoding statistics (false
// where a chunk has none). Read as a dictionary, a chunk that fell back
// to plain pages would be hashed value by value.
func AllDictPages(meta *metadata.FileMetaData, i int, groups []int) bool {
	if groups == nil {
		groups = make([]int, meta.NumRowGroups())
		for g := range groups {
			groups[g] = g
		}
	}
	for _, g := range groups {
		cc, err := meta.RowGroup(g).ColumnChunk(i)
		if err != nil {
			return false
		}
		stats := cc.EncodingStats()
		if len(stats) == 0 {
			return false
		}
		for _, s := range stats {
			switch int32(s.PageType) {
			case 0, 3: // DATA_PAGE, DATA_PAGE_V2
				if s.Encoding != parquet.Encodings.RLEDict && s.Encoding != parquet.Encodings.PlainDict {
					return false
				}
			}
		}
	}
	return true
}

// DictStrings makes d, a dictionary of strings, a string array: each
// value's bytes copied once into one buffer. With sel (ascending rows of
// d) only those rows are made, in that order; nil means every row.
func DictStrings(mem memory.Allocator, d *array.Dictionary, sel []int32) (arrow.Array, error) {
	dict, ok := d.Dictionary().(*array.String)
	if !ok {
		return nil, fmt.Errorf("a dictionary of %s, not strings", d.Dictionary().DataType())
	}
	n := d.Len()
	if sel != nil {
		n = len(sel)
	}
	// the indices of the rows made, -1 for NULL
	var idx []int32
	if ind, ok := d.Indices().(*array.Int32); ok && ind.NullN() == 0 && sel == nil {
		idx = ind.Int32Values()
	} else {
		idx = make([]int32, n)
		for i := range n {
			r := i
			if sel != nil {
				r = int(sel[i])
				if r < 0 || r >= d.Len() {
					return nil, fmt.Errorf("row %d of a dictionary array of %d", r, d.Len())
				}
			}
			idx[i] = -1
			if d.IsValid(r) {
				k := d.GetValueIndex(r)
				if k < 0 || k > math.MaxInt32 {
					return nil, fmt.Errorf("dictionary index %d", k)
				}
				idx[i] = int32(k)
			}
		}
	}
	offs := dict.ValueOffsets()
	bytes := dict.ValueBytes()
	base := offs[0]
	dlen := int32(dict.Len())
	var total, nulls int
	for _, k := range idx {
		if k >= dlen || k < -1 {
			return nil, fmt.Errorf("dictionary index %d of %d values", k, dlen)
		}
		if k >= 0 {
			total += int(offs[k+1] - offs[k])
		} else {
			nulls++
		}
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("%d bytes of strings in one batch", total)
	}
	ob := memory.NewResizableBuffer(mem)
	defer ob.Release()
	ob.Resize((n + 1) * 4)
	vb := memory.NewResizableBuffer(mem)
	defer vb.Release()
	vb.Resize(total)
	o := arrow.Int32Traits.CastFromBytes(ob.Bytes())[:n+1]
	v := vb.Bytes()
	var pos int32
	for i, k := range idx {
		o[i] = pos
		if k >= 0 {
			pos += int32(copy(v[pos:], bytes[offs[k]-base:offs[k+1]-base]))
		}
	}
	o[n] = pos
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vs := valid.Bytes()
		clear(vs)
		for i, k := range idx {
			if k >= 0 {
				bitutil.SetBit(vs, i)
			}
		}
	}
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{valid, ob, vb}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

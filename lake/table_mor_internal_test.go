package lake

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// checkUniqueKeys on the executor's row keys: NULL equals NULL (as an
// equality delete matches it) but not 0 or "", composite keys compare
// whole, and duplicates are found across batches.
func TestCheckUniqueKeys(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	batch := func(ids []int64, idValid []bool, ks []string, kValid []bool) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues(ids, idValid)
		b.Field(1).(*array.StringBuilder).AppendValues(ks, kValid)
		return b.NewRecordBatch()
	}
	for _, tc := range []struct {
		name    string
		keys    []string
		batches []arrow.RecordBatch
		dup     string // "" for unique
	}{
		{"unique", []string{"id"}, []arrow.RecordBatch{batch([]int64{1, 2, 3}, nil, []string{"a", "a", "a"}, nil)}, ""},
		{"NULL and 0 differ", []string{"id"}, []arrow.RecordBatch{batch([]int64{0, 0}, []bool{true, false}, []string{"a", "b"}, nil)}, ""},
		{"two NULLs", []string{"id"}, []arrow.RecordBatch{batch([]int64{0, 5, 0}, []bool{false, true, false}, []string{"a", "b", "c"}, nil)}, "id=(null)"},
		{"NULL and empty string differ", []string{"k"}, []arrow.RecordBatch{batch([]int64{1, 2}, nil, []string{"", ""}, []bool{true, false})}, ""},
		{"composite unique", []string{"id", "k"}, []arrow.RecordBatch{batch([]int64{1, 1, 2}, nil, []string{"a", "b", "a"}, nil)}, ""},
		{"composite duplicate", []string{"id", "k"}, []arrow.RecordBatch{batch([]int64{1, 2, 1}, nil, []string{"a", "b", "a"}, nil)}, "id=1, k=a"},
		{"across batches", []string{"k"}, []arrow.RecordBatch{batch([]int64{1}, nil, []string{"x"}, nil), batch([]int64{2}, nil, []string{"x"}, nil)}, "k=x"},
		{"many unique", []string{"id"}, manyKeys(300_000, -1, 7919), ""},
		{"many, one repeated", []string{"id"}, manyKeys(300_000, 123_457, 7919), "id=123457"},
		{"many dense unique", []string{"id"}, manyKeys(300_000, -1, 3), ""},
		{"many dense, one repeated", []string{"id"}, manyKeys(300_000, 123_456, 3), "id=123456"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &materialized{schema: schema, batches: tc.batches}
			for _, b := range tc.batches {
				m.rows += b.NumRows()
			}
			err := checkUniqueKeys(m, tc.keys)
			if len(tc.keys) == 1 {
				// the bitmap, where it applies, must find the row the hashes find
				col := schema.FieldIndices(tc.keys[0])[0]
				byBits, ok := firstRepeatedInt(m, col)
				if ok != (strings.HasPrefix(tc.name, "many dense") || tc.keys[0] == "id" && !strings.HasPrefix(tc.name, "many")) {
					t.Fatalf("the bitmap applied: %v", ok)
				}
				byHash, herr := firstRepeatedHashed(m, []int{col}, []arrow.DataType{schema.Field(col).Type})
				if herr != nil {
					t.Fatal(herr)
				}
				if ok && byBits != byHash {
					t.Fatalf("the bitmap found row %d repeated, the hashes row %d", byBits, byHash)
				}
			}
			switch {
			case tc.dup == "" && err != nil:
				t.Fatalf("unique keys refused: %v", err)
			case tc.dup != "" && (err == nil || !strings.Contains(err.Error(), "key ("+tc.dup+") appears more than once")):
				t.Fatalf("duplicate %s: %v", tc.dup, err)
			}
			for _, b := range tc.batches {
				b.Release()
			}
		})
	}
}

// manyKeys is n distinct ids (i*step) in batches of 4,096, plus id again
// at the end when id >= 0.
func manyKeys(n int, id, step int64) []arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var out []arrow.RecordBatch
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	flush := func() {
		out = append(out, b.NewRecordBatch())
	}
	for i := 0; i < n; i++ {
		v := int64(i) * step
		if i == n/2 && id >= 0 {
			v = id // the repeated key, first seen mid-way
		}
		b.Field(0).(*array.Int64Builder).Append(v)
		b.Field(1).(*array.StringBuilder).Append("x")
		if (i+1)%4096 == 0 {
			flush()
		}
	}
	if id >= 0 {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("x")
	}
	flush()
	return out
}

// splitRows cuts batches into k contiguous shares of about equal rows,
// slicing the batches a cut falls in, and every share holds references of
// its own: releasing the originals and the shares frees everything.
func TestSplitRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, sizes := range [][]int64{{10}, {3, 0, 7, 1, 9}, {1, 1, 1, 1, 1}, {100, 1}, {1, 100}} {
		var batches []arrow.RecordBatch
		var rows int64
		for _, n := range sizes {
			b := array.NewInt64Builder(mem)
			for i := int64(0); i < n; i++ {
				b.Append(rows + i)
			}
			col := b.NewArray()
			b.Release()
			batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{col}, n))
			col.Release()
			rows += n
		}
		for k := 1; k <= 4; k++ {
			shares := splitRows(batches, rows, k)
			if len(shares) != k {
				t.Fatalf("sizes %v, k %d: %d shares", sizes, k, len(shares))
			}
			per := (rows + int64(k) - 1) / int64(k)
			next := int64(0)
			for s, sh := range shares {
				var n int64
				for _, b := range sh {
					if b.NumRows() == 0 {
						t.Errorf("sizes %v, k %d: share %d holds an empty batch", sizes, k, s)
					}
					for _, v := range b.Column(0).(*array.Int64).Int64Values() {
						if v != next {
							t.Fatalf("sizes %v, k %d: share %d has row %d where %d comes next", sizes, k, s, v, next)
						}
						next++
					}
					n += b.NumRows()
				}
				if n > per || (s < k-1 && n != min(per, rows-int64(s)*per)) {
					t.Errorf("sizes %v, k %d: share %d has %d rows, want %d", sizes, k, s, n, per)
				}
			}
			if next != rows {
				t.Fatalf("sizes %v, k %d: the shares hold %d of %d rows", sizes, k, next, rows)
			}
			for _, sh := range shares {
				for _, b := range sh {
					b.Release()
				}
			}
		}
		for _, b := range batches {
			b.Release()
		}
	}
}

// firstRepeatedInt on each integer type it takes, with NULLs (one NULL is
// a value, a second repeats it) and negative values, against the hashes.
func TestFirstRepeatedIntTypes(t *testing.T) {
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us} {
		for _, tc := range []struct {
			vals  []int64
			valid []bool
			dup   int32
		}{
			{[]int64{5, -3, 7, 0, -3}, []bool{true, true, true, false, true}, 4},
			{[]int64{0, 1, 0, 2}, []bool{false, true, false, true}, 2},
			{[]int64{-1 << 20, 1 << 20, 0}, nil, -1},
			{[]int64{9, 8, 7, 8, 9}, nil, 3},
		} {
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: true}}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for i, v := range tc.vals {
				if tc.valid != nil && !tc.valid[i] {
					b.Field(0).AppendNull()
					continue
				}
				switch fb := b.Field(0).(type) {
				case *array.Int64Builder:
					fb.Append(v)
				case *array.Int32Builder:
					fb.Append(int32(v))
				case *array.Date32Builder:
					fb.Append(arrow.Date32(v))
				case *array.TimestampBuilder:
					fb.Append(arrow.Timestamp(v))
				}
			}
			rb := b.NewRecordBatch()
			b.Release()
			m := &materialized{schema: schema, batches: []arrow.RecordBatch{rb}, rows: rb.NumRows()}
			got, ok := firstRepeatedInt(m, 0)
			byHash, err := firstRepeatedHashed(m, []int{0}, []arrow.DataType{typ})
			if err != nil {
				t.Fatal(err)
			}
			if !ok || got != tc.dup || byHash != tc.dup {
				t.Errorf("%s %v: the bitmap gave row %d (applied %v), the hashes %d; want %d", typ, tc.vals, got, ok, byHash, tc.dup)
			}
			rb.Release()
		}
	}
}

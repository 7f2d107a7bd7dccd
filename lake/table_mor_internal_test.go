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
		{"many unique", []string{"id"}, manyKeys(300_000, -1), ""},
		{"many, one repeated", []string{"id"}, manyKeys(300_000, 123_457), "id=123457"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &materialized{schema: schema, batches: tc.batches}
			for _, b := range tc.batches {
				m.rows += b.NumRows()
			}
			err := checkUniqueKeys(m, tc.keys)
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

// manyKeys is n distinct ids (spread over the int64 range) in batches of
// 4,096, plus id again at the end when id >= 0.
func manyKeys(n int, id int64) []arrow.RecordBatch {
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
		v := int64(i) * 7919
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

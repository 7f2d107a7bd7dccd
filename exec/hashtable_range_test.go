package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestBuildJoinKeyRanges builds on keys 0..rows-1 (every seventh NULL)
// with a key range of the middle third: the rows outside it must stay out
// of the table and come back as unmatched, the rows inside must be found
// by a probe, and NULL keys must count as before. Both build paths: a
// small table (rows added batch by batch) and one built by partition.
func TestBuildJoinKeyRanges(t *testing.T) {
	for _, rows := range []int{3_000, 900_000} {
		for _, nullSafe := range []bool{false, true} {
			t.Run(fmt.Sprintf("rows=%d/nullsafe=%v", rows, nullSafe), func(t *testing.T) {
				testBuildJoinKeyRanges(t, rows, nullSafe)
			})
		}
	}
}

func testBuildJoinKeyRanges(t *testing.T, rows int, nullSafe bool) {
	mem := hjMem(t)
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	lo, hi := int64(rows/3), int64(2*rows/3)
	isNull := func(r int) bool { return r%7 == 3 }
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	src := &hjTestSource{schema: schema}
	for r := range rows {
		if isNull(r) {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(int64(r))
		}
		if (r+1)%1000 == 0 || r == rows-1 {
			src.batches = append(src.batches, bld.NewRecordBatch())
		}
	}
	defer func() {
		for _, b := range src.batches {
			b.Release()
		}
	}()
	asked := 0
	opts := HashOptions{Mem: mem, NullSafeKeys: nullSafe, KeyRanges: func(n int) ([]*KeyRange, error) {
		asked++
		if n != rows {
			t.Errorf("KeyRanges got %d rows, want %d", n, rows)
		}
		return []*KeyRange{{Lo: lo, Hi: hi}}, nil
	}}
	jb, err := BuildJoin(ctx, src, []Expr{hjCol(schema, 0)}, opts, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer jb.Release()
	if asked != 1 {
		t.Fatalf("KeyRanges asked %d times", asked)
	}
	var nulls, outside int
	for r := range rows {
		switch {
		case isNull(r):
			nulls++
		case int64(r) < lo || int64(r) > hi:
			outside++
		}
	}
	if jb.OutOfRange != outside {
		t.Errorf("OutOfRange %d, want %d", jb.OutOfRange, outside)
	}
	wantNulls := nulls
	if nullSafe {
		wantNulls = 0 // a NULL is a key like any other
	}
	if got := jb.Table.NullKeyRows(); got != wantNulls {
		t.Errorf("NullKeyRows %d, want %d", got, wantNulls)
	}
	if rows > 100_000 && !jb.Table.partitioned() && jb.Table.numSlots() < htTouchMin {
		t.Errorf("the large build did not take the partitioned path (%d slots)", jb.Table.numSlots())
	}
	// probe every key once: those in range are found at their row,
	// the others (and NULL, unless null-safe) are not
	pb := array.NewInt64Builder(mem)
	for r := range rows {
		if isNull(r) {
			pb.AppendNull()
		} else {
			pb.Append(int64(r))
		}
	}
	col := pb.NewArray()
	pb.Release()
	defer col.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
	defer batch.Release()
	groups, err := jb.Probe(opts.evalContext(ctx), batch, []Expr{hjCol(schema, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var wantUnmatched []int32
	seen := map[int32]bool{}
	for r, g := range groups {
		inRange := !isNull(r) && int64(r) >= lo && int64(r) <= hi
		switch {
		case inRange || (isNull(r) && nullSafe):
			if g < 0 {
				t.Fatalf("row %d (key in range or NULL-safe NULL) not found", r)
			}
			if !isNull(r) && jb.Table.First(g) != int32(r) {
				t.Fatalf("key %d found at build row %d", r, jb.Table.First(g))
			}
			if !seen[g] { // the NULL-safe NULLs are one group: mark it once
				seen[g] = true
				for s := jb.Table.First(g); s >= 0; s = jb.Table.Next(s) {
					jb.Table.SetMatched(s)
				}
			}
		default:
			if g >= 0 {
				t.Fatalf("row %d (key outside the range or NULL) found as group %d", r, g)
			}
			wantUnmatched = append(wantUnmatched, int32(r))
		}
	}
	var got, out []int32
	for from := int32(0); from < int32(rows); {
		got, from = jb.Table.AppendUnmatched(got, from, 4096)
	}
	for from := int32(0); from < int32(rows); {
		out, from = jb.AppendOutOfRange(out, from, 3000)
	}
	var wantOut []int32
	for _, r := range wantUnmatched {
		if !isNull(int(r)) {
			wantOut = append(wantOut, r)
		}
	}
	if !slices.Equal(out, wantOut) {
		t.Errorf("rows out of range: %d, want %d", len(out), len(wantOut))
	}
	if !slices.Equal(got, wantUnmatched) {
		t.Errorf("unmatched rows: %d, want %d", len(got), len(wantUnmatched))
	}
	if n := jb.Table.UnmatchedRows(); n != len(wantUnmatched) {
		t.Errorf("UnmatchedRows %d, want %d", n, len(wantUnmatched))
	}
}

// TestKeysOutOfRange covers each integer-like type, NULLs, a sliced
// array, a range per key of two, an empty range and a key type that
// ranges do not bound.
func TestKeysOutOfRange(t *testing.T) {
	mem := hjMem(t)
	fromJSON := func(typ arrow.DataType, vals string) arrow.Array {
		a, _, err := array.FromJSON(mem, typ, strings.NewReader(vals))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Release)
		return a
	}
	whole := fromJSON(arrow.PrimitiveTypes.Int32, "[1, null, 5, 9, 10, 20]")
	sliced := array.NewSlice(whole, 1, 6) // NULL, 5, 9, 10, 20
	defer sliced.Release()
	t1 := fromJSON(&arrow.TimestampType{Unit: arrow.Microsecond}, "[100, 200, 300]")
	d1 := fromJSON(arrow.FixedWidthTypes.Date32, "[7, 8, 9]")
	s1 := fromJSON(arrow.BinaryTypes.String, `["a", "b", "c"]`)
	cases := []struct {
		name   string
		ranges []*KeyRange
		cols   [][]arrow.Array
		want   [][]bool
		n      int
	}{
		{"int32 sliced with a NULL", []*KeyRange{{Lo: 5, Hi: 10}}, [][]arrow.Array{{sliced}}, [][]bool{{false, false, false, false, true}}, 1},
		{"none outside", []*KeyRange{{Lo: 0, Hi: 100}}, [][]arrow.Array{{sliced}}, [][]bool{nil}, 0},
		{"no range", []*KeyRange{nil}, [][]arrow.Array{{sliced}}, nil, 0},
		{"empty range", []*KeyRange{{Lo: 1, Hi: 0}}, [][]arrow.Array{{t1}}, [][]bool{{true, true, true}}, 3},
		{"two keys, counted once", []*KeyRange{{Lo: 150, Hi: 300}, {Lo: 8, Hi: 8}}, [][]arrow.Array{{t1, d1}}, [][]bool{{true, false, true}}, 2},
		{"strings unbounded", []*KeyRange{{Lo: 1, Hi: 0}}, [][]arrow.Array{{s1}}, [][]bool{nil}, 0},
		{"two batches", []*KeyRange{{Lo: 200, Hi: 200}}, [][]arrow.Array{{t1}, {t1}}, [][]bool{{true, false, true}, {true, false, true}}, 4},
	}
	for _, c := range cases {
		skip, n := keysOutOfRange(c.ranges, c.cols)
		if n != c.n {
			t.Errorf("%s: %d out of range, want %d", c.name, n, c.n)
		}
		if c.want == nil {
			if skip != nil {
				t.Errorf("%s: skip %v, want nil", c.name, skip)
			}
			continue
		}
		if len(skip) != len(c.want) {
			t.Errorf("%s: skip %v, want %v", c.name, skip, c.want)
			continue
		}
		for i := range skip {
			if !slices.Equal(skip[i], c.want[i]) {
				t.Errorf("%s: batch %d skip %v, want %v", c.name, i, skip[i], c.want[i])
			}
		}
	}
}

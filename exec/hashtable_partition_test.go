package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A build side large enough for the slot-order build (addPartitioned)
// gives the table AddRows gives in arrival order: the same rows, NULL
// rows, groups, and each key's rows chained in build order. Keys repeat
// (up to a few rows a key) and some are NULL, in several batches.
//
// On three cores (and batches of up to 1,000 rows), the keys are
// partitioned by three workers (partShares), whose shares must keep that
// order; on one, by one.
func TestJoinBuildPartitionedMatchesAddRows(t *testing.T) {
	for _, tc := range []struct {
		typ      arrow.DataType
		maxBatch int
	}{
		{arrow.PrimitiveTypes.Int64, 20_000}, {arrow.PrimitiveTypes.Int32, 20_000}, {arrow.BinaryTypes.String, 20_000},
		{arrow.PrimitiveTypes.Int64, 1_000}, {arrow.PrimitiveTypes.Int32, 1_000},
	} {
		typ := tc.typ
		t.Run(fmt.Sprintf("%s/batches-of-%d", typ, tc.maxBatch), func(t *testing.T) {
			procs := 1 // one share
			if tc.maxBatch < 20_000 {
				procs = 3
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			mem := hjMem(t)
			ctx := context.Background()
			const rows, distinct = 150_000, 60_000
			rng := rand.New(rand.NewPCG(7, uint64(typ.ID())))
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: true}}, nil)
			keyOf := make([]int64, rows) // -1: NULL
			src := &hjTestSource{schema: schema}
			for off := 0; off < rows; {
				n := min(1+rng.IntN(tc.maxBatch), rows-off)
				bld := array.NewRecordBuilder(mem, schema)
				for r := off; r < off+n; r++ {
					k := int64(rng.IntN(distinct)) * 7919
					if rng.IntN(100) == 0 {
						k = -1
					}
					keyOf[r] = k
					switch b := bld.Field(0).(type) {
					case *array.Int64Builder:
						if k < 0 {
							b.AppendNull()
						} else {
							b.Append(k)
						}
					case *array.Int32Builder:
						if k < 0 {
							b.AppendNull()
						} else {
							b.Append(int32(k))
						}
					case *array.StringBuilder:
						if k < 0 {
							b.AppendNull()
						} else {
							b.Append("key-" + string(binary.AppendVarint(nil, k)))
						}
					}
				}
				src.batches = append(src.batches, bld.NewRecordBatch())
				bld.Release()
				off += n
			}
			if err := src.Open(ctx); err != nil {
				t.Fatal(err)
			}
			if shares := len(partShares(len(src.batches))); (shares > 1) != (tc.maxBatch < 20_000) {
				t.Fatalf("%d batches in %d shares", len(src.batches), shares)
			}
			keys := []Expr{hjCol(schema, 0)}
			jb, err := BuildJoin(ctx, src, keys, HashOptions{Mem: mem, Budget: NewBudget(0)}, "test")
			if err != nil {
				t.Fatal(err)
			}
			defer jb.Release()

			// the reference: one AddRows per batch, in arrival order
			enc, err := NewKeyEncoder([]arrow.DataType{typ})
			if err != nil {
				t.Fatal(err)
			}
			ref := NewJoinTable(enc.Width(), rows)
			if typ.ID() != arrow.STRING && !htPartitionSized(jb.Table.inline, jb.Table.numSlots()) {
				t.Fatal("the table under test is too small to be built by partition")
			}
			var rk RowKeys
			for _, b := range src.batches {
				if err := enc.Encode([]arrow.Array{b.Column(0)}, &rk); err != nil {
					t.Fatal(err)
				}
				ref.AddRows(&rk)
			}
			defer src.Close()
			got := jb.Table
			if got.Rows() != ref.Rows() || got.NullKeyRows() != ref.NullKeyRows() || got.Len() != ref.Len() {
				t.Fatalf("rows %d, NULL rows %d, groups %d; want %d, %d, %d",
					got.Rows(), got.NullKeyRows(), got.Len(), ref.Rows(), ref.NullKeyRows(), ref.Len())
			}
			chain := func(j *JoinTable, g int32) []int32 {
				var out []int32
				for r := j.First(g); r >= 0; r = j.Next(r) {
					out = append(out, r)
				}
				return out
			}
			// probe with every build row's key: the chains must agree
			var pk RowKeys
			gotIDs, refIDs := make([]int32, 20_000), make([]int32, 20_000)
			for _, b := range src.batches {
				if err := enc.Encode([]arrow.Array{b.Column(0)}, &pk); err != nil {
					t.Fatal(err)
				}
				got.Probe(&pk, gotIDs)
				ref.Probe(&pk, refIDs)
				for r := 0; r < pk.N; r++ {
					if (gotIDs[r] < 0) != (refIDs[r] < 0) {
						t.Fatalf("probe row %d: group %d, reference %d", r, gotIDs[r], refIDs[r])
					}
					if gotIDs[r] < 0 {
						continue
					}
					g, w := chain(got, gotIDs[r]), chain(ref, refIDs[r])
					if !slices.Equal(g, w) || got.Count(gotIDs[r]) != len(w) {
						t.Fatalf("chain %v (count %d), want %v", g, got.Count(gotIDs[r]), w)
					}
				}
			}
			for r := range rows {
				if keyOf[r] < 0 && jb.Table.Next(int32(r)) != -1 {
					t.Fatalf("NULL-key row %d chains to %d", r, jb.Table.Next(int32(r)))
				}
			}
		})
	}
}

// The slot-order build stops with the context's error once it ends.
func TestJoinBuildPartitionedStopsWhenCancelled(t *testing.T) {
	enc, err := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		t.Fatal(err)
	}
	mem := hjMem(t)
	bld := array.NewInt64Builder(mem)
	for i := range 200_000 {
		bld.Append(int64(i))
	}
	col := bld.NewArray()
	bld.Release()
	defer col.Release()
	jt := NewJoinTable(enc.Width(), col.Len())
	if !jt.partitioned() {
		t.Fatal("a 200,000-row table of BIGINT keys should be built by partition")
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err = jt.addPartitioned(ctx, 1, func(i int, rk *RowKeys) error {
		calls++
		if calls == 2 {
			cancel() // during the second pass
		}
		return enc.Encode([]arrow.Array{col}, rk)
	}, func(int64) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v, want context.Canceled", err)
	}
}

// A large build takes its slots from the pool a released build left
// them in, with that build's slots still in them: the second build must
// find exactly its own keys (none of the first's), and its array goes
// back to the pool when it is released. Under go test the pool poisons
// what it takes back, so the second table starts from slots that are
// all occupied.
func TestJoinBuildReusesPooledSlots(t *testing.T) {
	mem := hjMem(t)
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	const rows = 150_000
	build := func(first int64) *JoinBuild {
		bld := array.NewRecordBuilder(mem, schema)
		defer bld.Release()
		src := &hjTestSource{schema: schema}
		for r := range int64(rows) {
			bld.Field(0).(*array.Int64Builder).Append(first + r)
			if (r+1)%10_000 == 0 {
				src.batches = append(src.batches, bld.NewRecordBatch())
			}
		}
		jb, err := BuildJoin(ctx, src, []Expr{hjCol(schema, 0)}, HashOptions{Mem: mem}, "test")
		if err != nil {
			t.Fatal(err)
		}
		src.Close()
		for _, b := range src.batches {
			b.Release()
		}
		return jb
	}
	probe := func(jb *JoinBuild, first int64) []int32 {
		bld := array.NewInt64Builder(mem)
		defer bld.Release()
		for r := range int64(10_000) {
			bld.Append(first + r*15)
		}
		col := bld.NewArray()
		defer col.Release()
		b := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
		defer b.Release()
		groups, err := jb.Probe(&EvalContext{Ctx: ctx, Mem: mem}, b, []Expr{hjCol(schema, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(groups)
	}
	htSlots.empty()
	a := build(0)
	if !htPartitionSized(a.Table.inline, a.Table.numSlots()) || a.Table.dirty {
		t.Fatalf("the first table: inline %v, %d slots, dirty %v", a.Table.inline, a.Table.numSlots(), a.Table.dirty)
	}
	n := a.Table.numSlots()
	a.Release()
	if arrays, bytes := htSlots.held(); arrays != 1 || bytes != int64(n)*16 {
		t.Fatalf("after the first release the pool holds %d arrays, %d bytes; want 1, %d", arrays, bytes, n*16)
	}
	// the second build's keys start where the first's ended
	b := build(rows)
	defer b.Release()
	if arrays, _ := htSlots.held(); arrays != 0 {
		t.Fatalf("the second build left %d arrays in the pool; it should have taken the one there", arrays)
	}
	if b.Table.dirty || b.Table.numSlots() != n {
		t.Fatalf("the second table: dirty %v, %d slots; want clean, %d", b.Table.dirty, b.Table.numSlots(), n)
	}
	for _, first := range []int64{0, 2 * rows} { // the first build's keys, and keys of neither
		for i, g := range probe(b, first) {
			if g >= 0 {
				t.Fatalf("key %d: group %d in the second table", first+int64(i*15), g)
			}
		}
	}
	for i, g := range probe(b, rows) { // the second build's keys, every one there
		if g < 0 || b.Table.First(g) != int32(i*15) {
			t.Fatalf("key %d: group %d, want the group of row %d", rows+i*15, g, i*15)
		}
	}
}

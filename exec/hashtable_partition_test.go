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
			if typ.ID() != arrow.STRING && !(jb.Table.inline && jb.Table.numSlots() >= htTouchMin) {
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

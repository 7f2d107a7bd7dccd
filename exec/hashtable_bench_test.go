package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The hash table benchmarks build a table of n distinct keys from empty
// (growth included) and then look every key up once, against Go's
// built-in map doing the same (v, ok := m[k]; if !ok { m[k] = len(m) }).
// One op is the whole build plus probe.
//
//   - .../batched: the operators' path. Keys come as Arrow columns in
//     8192-row batches; skade encodes them (RowKeys) and calls
//     FindOrInsertRows / FindRows; the map reads the same columns and
//     writes the same ids slice.
//   - .../scalar: one key at a time through FindOrInsert / Find (with the
//     tag byte a RowKeys key carries and an xxh3 hash per key).
//
// Besides wall ns/key they report cpu-ns/key (process user+system CPU
// time, GC included), which shared machines distort less.
//
//	go test -run '^$' -bench 'HashTable' -benchtime 2x ./exec

func htBenchInt64Keys(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(uint64(i) * 0x9E3779B97F4A7C15) // distinct, scattered
	}
	return keys
}

func htBenchStringKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "customer-" + strconv.FormatUint(uint64(i)*0x9E3779B97F4A7C15>>20, 36)
	}
	return keys
}

func htBenchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// htBenchFaults is the process's minor page faults so far: pages touched
// that were not resident, each a trap that costs microseconds on a
// virtual machine.
func htBenchFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// htBenchPerKey runs f as the benchmark loop and reports ns/key and
// cpu-ns/key.
func htBenchPerKey(b *testing.B, n int, f func()) {
	cpu0 := htBenchCPU()
	for b.Loop() {
		f()
	}
	cpu := htBenchCPU() - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/key")
}

func htBenchColumns(n int, str bool) []arrow.Array {
	mem := memory.NewGoAllocator()
	var cols []arrow.Array
	var ik []int64
	var sk []string
	if str {
		sk = htBenchStringKeys(n)
	} else {
		ik = htBenchInt64Keys(n)
	}
	for off := 0; off < n; off += 8192 {
		end := min(off+8192, n)
		if str {
			bld := array.NewStringBuilder(mem)
			bld.AppendValues(sk[off:end], nil)
			cols = append(cols, bld.NewArray())
			bld.Release()
		} else {
			bld := array.NewInt64Builder(mem)
			bld.AppendValues(ik[off:end], nil)
			cols = append(cols, bld.NewArray())
			bld.Release()
		}
	}
	return cols
}

func htBenchSkadeBatched(b *testing.B, cols []arrow.Array, n int) {
	enc, err := NewKeyEncoder([]arrow.DataType{cols[0].DataType()})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int32, 8192)
	var rk RowKeys
	htBenchPerKey(b, n, func() {
		ht := NewHashTable(enc.Width(), 0)
		for _, c := range cols {
			if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
				b.Fatal(err)
			}
			ht.FindOrInsertRows(&rk, ids, false)
		}
		for _, c := range cols {
			if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
				b.Fatal(err)
			}
			ht.FindRows(&rk, ids, false)
			if ids[0] < 0 {
				b.Fatal("lost a key")
			}
		}
		if ht.Len() != n {
			b.Fatal("wrong group count")
		}
	})
}

func BenchmarkHashTableInt64(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		cols := htBenchColumns(n, false)
		keys := htBenchInt64Keys(n)
		name := fmt.Sprintf("n=%dM", n/1_000_000)
		b.Run(name+"/batched/skade", func(b *testing.B) { htBenchSkadeBatched(b, cols, n) })
		b.Run(name+"/batched/gomap", func(b *testing.B) {
			ids := make([]int32, 8192)
			htBenchPerKey(b, n, func() {
				m := map[int64]int32{}
				for _, c := range cols {
					for r, k := range c.(*array.Int64).Int64Values() {
						id, ok := m[k]
						if !ok {
							id = int32(len(m))
							m[k] = id
						}
						ids[r] = id
					}
				}
				for _, c := range cols {
					for r, k := range c.(*array.Int64).Int64Values() {
						id, ok := m[k]
						if !ok {
							b.Fatal("lost a key")
						}
						ids[r] = id
					}
				}
			})
		})
		b.Run(name+"/scalar/skade", func(b *testing.B) {
			var buf [9]byte
			buf[0] = 1 // the tag byte a RowKeys key carries
			htBenchPerKey(b, n, func() {
				ht := NewHashTable(9, 0)
				for _, k := range keys {
					binary.LittleEndian.PutUint64(buf[1:], uint64(k))
					ht.FindOrInsert(buf[:], HashKey(buf[:]))
				}
				for _, k := range keys {
					binary.LittleEndian.PutUint64(buf[1:], uint64(k))
					if _, ok := ht.Find(buf[:], HashKey(buf[:])); !ok {
						b.Fatal("lost a key")
					}
				}
			})
		})
		b.Run(name+"/scalar/gomap", func(b *testing.B) {
			htBenchPerKey(b, n, func() {
				m := map[int64]int32{}
				for _, k := range keys {
					if _, ok := m[k]; !ok {
						m[k] = int32(len(m))
					}
				}
				for _, k := range keys {
					if _, ok := m[k]; !ok {
						b.Fatal("lost a key")
					}
				}
			})
		})
		htReleaseArrays(cols)
	}
}

func BenchmarkHashTableString(b *testing.B) {
	const n = 1_000_000
	cols := htBenchColumns(n, true)
	defer htReleaseArrays(cols)
	b.Run("n=1M/batched/skade", func(b *testing.B) { htBenchSkadeBatched(b, cols, n) })
	b.Run("n=1M/batched/gomap", func(b *testing.B) {
		ids := make([]int32, 8192)
		htBenchPerKey(b, n, func() {
			m := map[string]int32{}
			for _, c := range cols {
				s := c.(*array.String)
				for r := 0; r < s.Len(); r++ {
					k := s.Value(r)
					id, ok := m[k]
					if !ok {
						id = int32(len(m))
						m[k] = id // Value aliases the column; the map keeps it
					}
					ids[r] = id
				}
			}
			for _, c := range cols {
				s := c.(*array.String)
				for r := 0; r < s.Len(); r++ {
					id, ok := m[s.Value(r)]
					if !ok {
						b.Fatal("lost a key")
					}
					ids[r] = id
				}
			}
		})
	})
}

// BenchmarkJoinTableMergeShape is the join of a MERGE on bench/peer's
// shape: a sized JoinTable built on nBuild BIGINT keys (1% of them in
// the probe side's range, the rest new) and sealed, then probed with
// nProbe consecutive keys of which about 1.1% hit. It reports build and
// probe time per key separately, and the MB of page faults the build
// took; one op is one build and one probe.
//
//	go test -run '^$' -bench 'JoinTableMergeShape' -benchtime 5x ./exec
func BenchmarkJoinTableMergeShape(b *testing.B) {
	const nProbe = 10_000_000
	for _, c := range []struct {
		nBuild   int
		viaBuild bool
	}{{110_000, false}, {1_100_000, false}, {1_100_000, true}} {
		nBuild, viaBuild := c.nBuild, c.viaBuild
		b.Run(fmt.Sprintf("build=%d/probe=%dM/batch=%v", nBuild, nProbe/1_000_000, viaBuild), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			batches := func(vals func(i int) int64, n int) []arrow.Array {
				var cols []arrow.Array
				for off := 0; off < n; off += 8192 {
					bld := array.NewInt64Builder(mem)
					for i := off; i < min(off+8192, n); i++ {
						bld.Append(vals(i))
					}
					cols = append(cols, bld.NewArray())
					bld.Release()
				}
				return cols
			}
			hits := nBuild / 11
			build := batches(func(i int) int64 {
				if i < hits {
					return int64(i) * int64(nProbe/hits)
				}
				return int64(nProbe) + int64(i)
			}, nBuild)
			probe := batches(func(i int) int64 { return int64(i) }, nProbe)
			defer htReleaseArrays(build)
			defer htReleaseArrays(probe)
			enc, err := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
			if err != nil {
				b.Fatal(err)
			}
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
			ctx := context.Background()
			ec := HashOptions{}.withDefaults().evalContext(ctx)
			var rk RowKeys
			ids := make([]int32, 8192)
			var buildTime, probeTime time.Duration
			var buildFaults int64
			for b.Loop() {
				src := &hjTestSource{schema: schema}
				for _, c := range build {
					c.Retain()
					src.batches = append(src.batches, array.NewRecordBatch(schema, []arrow.Array{c}, int64(c.Len())))
				}
				f0 := htBenchFaults()
				t0 := time.Now()
				if err := src.Open(ctx); err != nil {
					b.Fatal(err)
				}
				jb, err := BuildJoin(ctx, src, []Expr{hjCol(schema, 0)}, HashOptions{Mem: mem}, "bench")
				src.Close()
				if err != nil {
					b.Fatal(err)
				}
				jt := jb.Table
				t1 := time.Now()
				buildFaults += htBenchFaults() - f0
				found := 0
				for _, c := range probe {
					var groups []int32
					if viaBuild {
						// as MERGE probes: JoinBuild.Probe on a batch
						pb := array.NewRecordBatch(schema, []arrow.Array{c}, int64(c.Len()))
						groups, err = jb.Probe(ec, pb, []Expr{hjCol(schema, 0)})
						pb.Release()
						if err != nil {
							b.Fatal(err)
						}
					} else {
						if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
							b.Fatal(err)
						}
						jt.Probe(&rk, ids)
						groups = ids[:rk.N]
					}
					for _, g := range groups {
						if g >= 0 {
							found++
						}
					}
				}
				probeTime += time.Since(t1)
				buildTime += t1.Sub(t0)
				jb.Release()
				if found != hits {
					b.Fatalf("found %d keys, want %d", found, hits)
				}
			}
			b.ReportMetric(float64(buildTime.Nanoseconds())/float64(b.N)/float64(nBuild), "build-ns/key")
			b.ReportMetric(float64(probeTime.Nanoseconds())/float64(b.N)/float64(nProbe), "probe-ns/key")
			b.ReportMetric(float64(buildFaults)*4096/1e6/float64(b.N), "build-faultMB/op")
		})
	}
}

package exec

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/zeebo/xxh3"
)

// The hash table benchmarks build a table of n distinct keys from empty
// (growth included) and then look every key up once, against Go's
// built-in map doing the same (v, ok := m[k]; if !ok { m[k] = len(m) }).
// One op is the whole build plus probe; ns/key divides by n.
//
//	go test -run '^$' -bench 'HashTable' -benchtime 3x -count 5 ./exec

func benchInt64Keys(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(uint64(i) * 0x9E3779B97F4A7C15) // distinct, scattered
	}
	return keys
}

func benchStringKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "customer-" + strconv.FormatUint(uint64(i)*0x9E3779B97F4A7C15>>20, 36)
	}
	return keys
}

func BenchmarkHashTableInt64(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		keys := benchInt64Keys(n)
		for _, presize := range []bool{false, true} {
			hint, suffix := 0, ""
			if presize {
				hint, suffix = n, "/presized"
			}
			b.Run(fmt.Sprintf("n=%dM/skade%s", n/1_000_000, suffix), func(b *testing.B) {
				var buf [9]byte
				buf[0] = 1 // the tag byte a RowKeys key carries
				for b.Loop() {
					ht := NewHashTable(9, hint)
					for _, k := range keys {
						binary.LittleEndian.PutUint64(buf[1:], uint64(k))
						ht.FindOrInsert(buf[:], xxh3.Hash(buf[:]))
					}
					for _, k := range keys {
						binary.LittleEndian.PutUint64(buf[1:], uint64(k))
						if _, ok := ht.Find(buf[:], xxh3.Hash(buf[:])); !ok {
							b.Fatal("lost a key")
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			})
			b.Run(fmt.Sprintf("n=%dM/gomap%s", n/1_000_000, suffix), func(b *testing.B) {
				for b.Loop() {
					m := make(map[int64]int32, hint)
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
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			})
		}
	}
}

func BenchmarkHashTableString(b *testing.B) {
	const n = 1_000_000
	keys := benchStringKeys(n)
	b.Run("n=1M/skade", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			ht := NewHashTable(0, 0)
			for _, k := range keys {
				buf = append(append(buf[:0], 1, 0, 0, 0, 0), k...)
				binary.LittleEndian.PutUint32(buf[1:], uint32(len(k)))
				ht.FindOrInsert(buf, xxh3.Hash(buf))
			}
			for _, k := range keys {
				buf = append(append(buf[:0], 1, 0, 0, 0, 0), k...)
				binary.LittleEndian.PutUint32(buf[1:], uint32(len(k)))
				if _, ok := ht.Find(buf, xxh3.Hash(buf)); !ok {
					b.Fatal("lost a key")
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
	})
	b.Run("n=1M/gomap", func(b *testing.B) {
		for b.Loop() {
			m := map[string]int32{}
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
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
	})
}

// BenchmarkHashTableArrowInt64 is the operators' path: encode an Arrow
// int64 column into RowKeys in 8192-row batches, then FindOrInsertRows.
func BenchmarkHashTableArrowInt64(b *testing.B) {
	const n, batch = 1_000_000, 8192
	keys := benchInt64Keys(n)
	mem := memory.NewGoAllocator()
	var cols []arrow.Array
	for off := 0; off < n; off += batch {
		bld := array.NewInt64Builder(mem)
		bld.AppendValues(keys[off:min(off+batch, n)], nil)
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	defer htReleaseArrays(cols)
	enc, _ := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	ids := make([]int32, batch)
	var rk RowKeys
	for b.Loop() {
		ht := NewHashTable(enc.Width(), 0)
		for _, c := range cols {
			if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
				b.Fatal(err)
			}
			ht.FindOrInsertRows(&rk, ids, false)
		}
		if ht.Len() != n {
			b.Fatal("wrong group count")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
}

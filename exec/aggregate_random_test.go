package exec

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHashAggregateRandomized compares grouped count, count(DISTINCT),
// sum, min, max and a FILTERed count with a map oracle, on random groups
// and values with NULLs, random batch splits and output batch sizes.
func TestHashAggregateRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	s := hjSchema("g:str", "v:i32", "pos:bool")
	for iter := 0; iter < 100; iter++ {
		n := rng.IntN(200)
		var raw [][]any
		type acc struct {
			cnt, cntV, cntPos int
			sum               int64
			min, max          int
			distinct          map[int]bool
		}
		groups := map[string]*acc{}
		var order []string
		for i := 0; i < n; i++ {
			var g any = strconv.Itoa(rng.IntN(8))
			gs := g.(string)
			if rng.IntN(10) == 0 {
				g, gs = nil, "NULL"
			}
			var v any
			if rng.IntN(5) > 0 {
				v = rng.IntN(2001) - 1000
			}
			raw = append(raw, []any{g, v, v != nil && v.(int) > 0})
			a := groups[gs]
			if a == nil {
				a = &acc{distinct: map[int]bool{}}
				groups[gs] = a
				order = append(order, gs)
			}
			a.cnt++
			if v != nil {
				x := v.(int)
				if a.cntV == 0 || x < a.min {
					a.min = x
				}
				if a.cntV == 0 || x > a.max {
					a.max = x
				}
				a.cntV++
				a.sum += int64(x)
				a.distinct[x] = true
				if x > 0 {
					a.cntPos++
				}
			}
		}
		var want []string
		for _, gs := range order {
			a := groups[gs]
			sum, mn, mx := "NULL", "NULL", "NULL"
			if a.cntV > 0 {
				sum, mn, mx = strconv.FormatInt(a.sum, 10), strconv.Itoa(a.min), strconv.Itoa(a.max)
			}
			want = append(want, strings.Join([]string{gs, strconv.Itoa(a.cnt), strconv.Itoa(a.cntV),
				strconv.Itoa(len(a.distinct)), sum, mn, mx, strconv.Itoa(a.cntPos)}, "|"))
		}
		t.Run(fmt.Sprintf("iter %d", iter), func(t *testing.T) {
			mem := hjMem(t)
			var parts [][][]any
			rest := raw
			for len(rest) > 0 {
				k := 1 + rng.IntN(len(rest))
				parts = append(parts, rest[:k])
				rest = rest[k:]
			}
			v := hjCol(s, 1)
			aggs := []*Aggregate{
				haMust(t, "count", nil, false, nil, nil),
				haMust(t, "count", []Expr{v}, false, nil, nil),
				haMust(t, "count", []Expr{v}, true, nil, nil),
				haMust(t, "sum", []Expr{v}, false, nil, nil),
				haMust(t, "min", []Expr{v}, false, nil, nil),
				haMust(t, "max", []Expr{v}, false, nil, nil),
				haMust(t, "count", []Expr{v}, false, hjCol(s, 2), nil),
			}
			h, err := NewHashAggregate(hjSrc(t, mem, s, parts...), []Expr{hjCol(s, 0)}, aggs, HashOptions{Mem: mem, BatchSize: 1 + rng.IntN(5)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, h)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// Without GROUP BY, count, sum of integers and sum of floats fold a batch
// without NULLs and without FILTER in a loop of their own (one group):
// the answers must be those of the row-by-row path, floats added in the
// same order to the last bit, 64-bit sums carried into 128 bits. Batches
// with NULLs and a FILTER take the row-by-row path in the same run.
func TestScalarAggregateFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 7))
	s := hjSchema("i:i32", "l:i64", "f:f64", "pos:bool")
	for iter := 0; iter < 60; iter++ {
		var parts [][][]any
		var cnt, cntI, cntPos int64
		var sumI, sumPosI int64
		var sumF float64
		var hi, lo uint64 // sum of l in 128 bits, two's complement
		var cntL, cntF int64
		nulls := iter%3 == 0
		huge := iter%4 == 1
		for p := 0; p < 1+rng.IntN(6); p++ {
			var rows [][]any
			for r := 0; r < rng.IntN(300); r++ {
				var i, l, f any
				if !nulls || rng.IntN(4) > 0 {
					iv := rng.IntN(2001) - 1000
					i = iv
					cntI++
					sumI += int64(iv)
					if iv > 0 {
						cntPos++
						sumPosI += int64(iv)
					}
				}
				if !nulls || rng.IntN(4) > 0 {
					lv := rng.Int64N(1_000_000) - 500_000
					if huge {
						lv = math.MaxInt64 - rng.Int64N(10)
					}
					l = int(lv)
					var c uint64
					lo, c = bits.Add64(lo, uint64(lv), 0)
					hi += c + uint64(lv>>63)
					cntL++
				}
				if !nulls || rng.IntN(4) > 0 {
					fv := rng.NormFloat64() * 1e6
					f = fv
					sumF += fv
					cntF++
				}
				cnt++
				rows = append(rows, []any{i, l, f, i != nil && i.(int) > 0})
			}
			parts = append(parts, rows)
		}
		mem := hjMem(t)
		iCol, lCol, fCol := hjCol(s, 0), hjCol(s, 1), hjCol(s, 2)
		aggs := []*Aggregate{
			haMust(t, "count", nil, false, nil, nil),
			haMust(t, "count", []Expr{iCol}, false, nil, nil),
			haMust(t, "sum", []Expr{iCol}, false, nil, nil),
			haMust(t, "sum", []Expr{fCol}, false, nil, nil),
			haMust(t, "count", []Expr{iCol}, false, hjCol(s, 3), nil),
			haMust(t, "sum", []Expr{iCol}, false, hjCol(s, 3), nil),
			haMust(t, "sum", []Expr{lCol}, false, nil, nil),
		}
		h, err := NewHashAggregate(hjSrc(t, mem, s, parts...), nil, aggs, HashOptions{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hjRun(t, h)
		if err != nil {
			t.Fatal(err)
		}
		nullOr := func(ok bool, v string) string {
			if !ok {
				return "NULL"
			}
			return v
		}
		sumL := new(big.Int).Lsh(new(big.Int).SetInt64(int64(hi)), 64)
		sumL.Add(sumL, new(big.Int).SetUint64(lo))
		want := strings.Join([]string{
			strconv.FormatInt(cnt, 10), strconv.FormatInt(cntI, 10),
			nullOr(cntI > 0, strconv.FormatInt(sumI, 10)),
			nullOr(cntF > 0, strconv.FormatFloat(sumF, 'g', -1, 64)),
			strconv.FormatInt(cntPos, 10), nullOr(cntPos > 0, strconv.FormatInt(sumPosI, 10)),
			nullOr(cntL > 0, sumL.String()),
		}, "|")
		if len(got) != 1 {
			t.Fatalf("iter %d: %d rows", iter, len(got))
		}
		if !aggSameRow(got[0], want) {
			t.Fatalf("iter %d (nulls %v, huge %v):\ngot  %s\nwant %s", iter, nulls, huge, got[0], want)
		}
	}
}

// aggSameRow compares rendered rows, floats by value (ValueStr and
// FormatFloat may spell one number differently).
func aggSameRow(got, want string) bool {
	g, w := strings.Split(got, "|"), strings.Split(want, "|")
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if g[i] == w[i] {
			continue
		}
		gf, err1 := strconv.ParseFloat(g[i], 64)
		wf, err2 := strconv.ParseFloat(w[i], 64)
		if err1 != nil || err2 != nil || gf != wf {
			return false
		}
	}
	return true
}

package exec

import (
	"fmt"
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

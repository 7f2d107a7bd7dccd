package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestHashJoinRandomized checks every join kind, on random inputs with
// duplicate and NULL keys, random batch splits, batch sizes and build
// sides, against a row-loop oracle; NestedLoopJoin with the equality in
// its predicate must agree too.
func TestHashJoinRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	type row struct {
		k    *int
		v    int
		repr string
	}
	gen := func(n int, tag string) ([]row, [][]any) {
		var rs []row
		var raw [][]any
		for i := 0; i < n; i++ {
			var k *int
			var kv any
			if rng.IntN(6) > 0 {
				x := rng.IntN(6)
				k, kv = &x, x
			}
			v := rng.IntN(100)
			ks := "NULL"
			if k != nil {
				ks = strconv.Itoa(*k)
			}
			rs = append(rs, row{k, v, ks + "|" + tag + strconv.Itoa(v)})
			raw = append(raw, []any{kv, tag + strconv.Itoa(v)})
		}
		return rs, raw
	}
	vOf := func(s string) int { n, _ := strconv.Atoi(s[1:]); return n }
	// residual: NULL when (lv + rv) % 7 = 0, else (lv + rv) % 3 <> 0.
	resFn := func(lv, rv int) (bool, bool) {
		if (lv+rv)%7 == 0 {
			return false, false
		}
		return (lv+rv)%3 != 0, true
	}
	residual := &hjPred{name: "(lv + rv) % 3 <> 0", f: func(b arrow.RecordBatch, r int) (bool, bool) {
		l, ok1 := hjStr(b, 1, r)
		rr, ok2 := hjStr(b, 3, r)
		if !ok1 || !ok2 {
			return false, false
		}
		return resFn(vOf(l), vOf(rr))
	}}
	nulls := "NULL|NULL"
	kinds := []JoinKind{JoinInner, JoinLeft, JoinRight, JoinFull, JoinSemi, JoinAnti, JoinMark, JoinNullAwareAnti}
	for iter := 0; iter < 300; iter++ {
		left, lraw := gen(rng.IntN(30), "l")
		right, rraw := gen(rng.IntN(30), "r")
		kind := kinds[rng.IntN(len(kinds))]
		useResidual := rng.IntN(2) == 0
		buildLeft := rng.IntN(2) == 0 && kind != JoinMark && kind != JoinNullAwareAnti
		batchSize := 1 + rng.IntN(7)
		// match3 is the pair's condition in three-valued logic: T, F or N.
		match3 := func(l, r row) byte {
			if l.k == nil || r.k == nil || *l.k != *r.k {
				return 'F'
			}
			if !useResidual {
				return 'T'
			}
			v, ok := resFn(l.v, r.v)
			switch {
			case !ok:
				return 'N'
			case v:
				return 'T'
			}
			return 'F'
		}
		var want []string
		rMatched := make([]bool, len(right))
		rightHasNull := false
		for _, r := range right {
			rightHasNull = rightHasNull || r.k == nil
		}
		for _, l := range left {
			matched, sawNull := false, false
			for j, r := range right {
				m := match3(l, r)
				sawNull = sawNull || m == 'N'
				if m == 'T' {
					matched = true
					rMatched[j] = true
					if kind <= JoinFull {
						want = append(want, l.repr+"|"+r.repr)
					}
				}
			}
			switch kind {
			case JoinLeft, JoinFull:
				if !matched {
					want = append(want, l.repr+"|"+nulls)
				}
			case JoinSemi:
				if matched {
					want = append(want, l.repr)
				}
			case JoinAnti:
				if !matched {
					want = append(want, l.repr)
				}
			case JoinMark:
				m := "false"
				if matched {
					m = "true"
				} else if useResidual && sawNull {
					m = "NULL"
				} else if !useResidual && len(right) > 0 && (l.k == nil || rightHasNull) {
					m = "NULL"
				}
				want = append(want, l.repr+"|"+m)
			case JoinNullAwareAnti:
				if useResidual && !matched && !sawNull {
					want = append(want, l.repr)
				}
				if !useResidual && !matched && !(len(right) > 0 && (l.k == nil || rightHasNull)) {
					want = append(want, l.repr)
				}
			}
		}
		if kind == JoinRight || kind == JoinFull {
			for j, r := range right {
				if !rMatched[j] {
					want = append(want, nulls+"|"+r.repr)
				}
			}
		}
		want = hjSorted(want)
		name := fmt.Sprintf("iter %d %s residual=%v buildLeft=%v batch=%d", iter, kind, useResidual, buildLeft, batchSize)
		t.Run(name, func(t *testing.T) {
			mem := hjMem(t)
			split := func(raw [][]any) [][][]any {
				var out [][][]any
				for len(raw) > 0 {
					n := 1 + rng.IntN(len(raw))
					out = append(out, raw[:n])
					raw = raw[n:]
				}
				return out
			}
			var res Expr
			if useResidual {
				res = residual
			}
			opts := HashOptions{Mem: mem, BuildLeft: buildLeft, BatchSize: batchSize}
			hj, err := NewHashJoin(kind, hjSrc(t, mem, hjLeftSchema, split(lraw)...), hjSrc(t, mem, hjRightSchema, split(rraw)...),
				[]Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, res, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, hj)
			if err != nil {
				t.Fatal(err)
			}
			if got = hjSorted(got); !slices.Equal(got, want) {
				t.Fatalf("%s\n got %q\nwant %q", hj, got, want)
			}
			if (kind == JoinMark || kind == JoinNullAwareAnti) && !useResidual {
				return // a nested loop join has no keys to be null-aware about
			}
			// coalesce(l.id = r.id, false) AND residual
			eq := &hjPred{name: "l.id = r.id AND residual", f: func(b arrow.RecordBatch, r int) (bool, bool) {
				x, ok1 := hjStr(b, 0, r)
				y, ok2 := hjStr(b, 2, r)
				if !ok1 || !ok2 || x != y {
					return false, true
				}
				if useResidual {
					return residual.f(b, r)
				}
				return true, true
			}}
			nl, err := NewNestedLoopJoin(kind, hjSrc(t, mem, hjLeftSchema, split(lraw)...), hjSrc(t, mem, hjRightSchema, split(rraw)...), eq, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err = hjRun(t, nl)
			if err != nil {
				t.Fatal(err)
			}
			if got = hjSorted(got); !slices.Equal(got, want) {
				t.Fatalf("%s\n got %q\nwant %q", nl, got, want)
			}
		})
	}
}

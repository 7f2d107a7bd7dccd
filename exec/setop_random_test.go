package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSetOpRandomized compares every set operation and Distinct with a
// multiset oracle on random rows with duplicates and NULLs.
func TestSetOpRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	gen := func(n int) ([][]any, []string) {
		var raw [][]any
		var reprs []string
		for i := 0; i < n; i++ {
			var a, b any = rng.IntN(3), strconv.Itoa(rng.IntN(2))
			if rng.IntN(4) == 0 {
				a = nil
			}
			if rng.IntN(4) == 0 {
				b = nil
			}
			raw = append(raw, []any{a, b})
			s := func(v any) string {
				if v == nil {
					return "NULL"
				}
				return fmt.Sprint(v)
			}
			reprs = append(reprs, s(a)+"|"+s(b))
		}
		return raw, reprs
	}
	split := func(raw [][]any) [][][]any {
		var out [][][]any
		for len(raw) > 0 {
			n := 1 + rng.IntN(len(raw))
			out = append(out, raw[:n])
			raw = raw[n:]
		}
		return out
	}
	for iter := 0; iter < 200; iter++ {
		lraw, l := gen(rng.IntN(25))
		rraw, r := gen(rng.IntN(25))
		kind := SetOpKind(rng.IntN(int(SetIntersectAll) + 1))
		rc := map[string]int{}
		for _, x := range r {
			rc[x]++
		}
		lc := map[string]int{}
		var want []string
		emitted := map[string]bool{}
		for _, x := range l {
			lc[x]++
			switch kind {
			case SetUnion:
				if !emitted[x] {
					want = append(want, x)
				}
			case SetExcept:
				if rc[x] == 0 && !emitted[x] {
					want = append(want, x)
				}
			case SetExceptAll:
				if lc[x] > rc[x] {
					want = append(want, x)
				}
			case SetIntersect:
				if rc[x] > 0 && !emitted[x] {
					want = append(want, x)
				}
			case SetIntersectAll:
				if lc[x] <= rc[x] {
					want = append(want, x)
				}
			}
			if len(want) > 0 && want[len(want)-1] == x {
				emitted[x] = true
			}
		}
		if kind == SetUnion {
			for _, x := range r {
				if !emitted[x] {
					want = append(want, x)
					emitted[x] = true
				}
			}
		}
		t.Run(fmt.Sprintf("iter %d %s", iter, kind), func(t *testing.T) {
			mem := hjMem(t)
			op, err := NewSetOp(kind, hjSrc(t, mem, soSchema, split(lraw)...), hjSrc(t, mem, soSchema, split(rraw)...), HashOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, op)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("left %q right %q\n got %q\nwant %q", l, r, got, want)
			}
			if kind != SetUnion {
				return
			}
			d, err := NewDistinct(hjSrc(t, mem, soSchema, split(append(slices.Clone(lraw), rraw...))...), HashOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err = hjRun(t, d)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("distinct: got %q want %q", strings.Join(got, ","), strings.Join(want, ","))
			}
		})
	}
}

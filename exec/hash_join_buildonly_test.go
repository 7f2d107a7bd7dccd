package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestJoinResidualOfTheBuildSideOnly: a semi, anti, mark or null-aware
// anti join whose residual reads only build columns finds each group's
// outcome once (joinCore.outcome) and must answer as pair by pair: a
// row matches when a candidate's flag is TRUE, and a mark is NULL (a
// null-aware anti drops the row) when none is TRUE but one is NULL.
// Random sides with NULL keys and NULL flags, small batches, hash and
// nested loop joins; the residual is the right side's flag column.
func TestJoinResidualOfTheBuildSideOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	left := hjSchema("id:i64", "lv:str")
	right := hjSchema("id:i64", "flag:bool")
	flag := &Column{Index: 3, Type: right.Field(1).Type, Name: "flag"}
	for iter := 0; iter < 200; iter++ {
		var lraw, rraw [][]any
		type lrow struct {
			k    any
			repr string
		}
		var ls []lrow
		for i := range rng.IntN(25) {
			var k any
			if rng.IntN(5) > 0 {
				k = rng.IntN(5)
			}
			lraw = append(lraw, []any{k, "l" + strconv.Itoa(i)})
			ks := "NULL"
			if k != nil {
				ks = strconv.Itoa(k.(int))
			}
			ls = append(ls, lrow{k, ks + "|l" + strconv.Itoa(i)})
		}
		for range rng.IntN(25) {
			var k, f any
			if rng.IntN(5) > 0 {
				k = rng.IntN(5)
			}
			if rng.IntN(3) > 0 {
				f = rng.IntN(4) == 0
			}
			rraw = append(rraw, []any{k, f})
		}
		kind := []JoinKind{JoinSemi, JoinAnti, JoinMark, JoinNullAwareAnti}[rng.IntN(4)]
		// keyed: the hash join's candidates are the rows of equal key;
		// else every right row is (a nested loop)
		for _, keyed := range []bool{true, false} {
			var want []string
			for _, l := range ls {
				matched, null := false, false
				for _, r := range rraw {
					if keyed && (l.k == nil || r[0] == nil || l.k != r[0]) {
						continue
					}
					switch r[1] {
					case nil:
						null = true
					case true:
						matched = true
					}
				}
				switch kind {
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
					} else if null {
						m = "NULL"
					}
					want = append(want, l.repr+"|"+m)
				case JoinNullAwareAnti:
					if !matched && !null {
						want = append(want, l.repr)
					}
				}
			}
			want = hjSorted(want)
			t.Run(fmt.Sprintf("iter %d %s keyed=%v", iter, kind, keyed), func(t *testing.T) {
				mem := hjMem(t)
				opts := HashOptions{Mem: mem, BatchSize: 1 + rng.IntN(5)}
				var j Operator
				var core *joinCore
				if keyed {
					hj, err := NewHashJoin(kind, hjSrc(t, mem, left, lraw), hjSrc(t, mem, right, rraw),
						[]Expr{hjCol(left, 0)}, []Expr{hjCol(right, 0)}, flag, opts)
					if err != nil {
						t.Fatal(err)
					}
					j, core = hj, &hj.joinCore
				} else {
					nl, err := NewNestedLoopJoin(kind, hjSrc(t, mem, left, lraw), hjSrc(t, mem, right, rraw), flag, opts)
					if err != nil {
						t.Fatal(err)
					}
					j, core = nl, &nl.joinCore
				}
				if !core.buildOnly {
					t.Fatalf("%s: the residual reads the build side only, but the join evaluates it pair by pair", j)
				}
				got, err := hjRun(t, j)
				if err != nil {
					t.Fatal(err)
				}
				if got = hjSorted(got); !slices.Equal(got, want) {
					t.Fatalf("%s\n got %q\nwant %q", j, got, want)
				}
			})
		}
	}
}

package lake_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// TestCorrelatedSubqueriesRandom checks decorrelated IN, NOT IN, EXISTS
// and scalar subqueries in a select list against a row-at-a-time oracle
// of Postgres's semantics, over random small tables full of NULLs.
func TestCorrelatedSubqueriesRandom(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 2))
	val := func(n int) *int { // NULL one time in four
		if rng.IntN(4) == 0 {
			return nil
		}
		v := rng.IntN(n)
		return &v
	}
	sqlOf := func(p *int) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	type row struct{ k, v *int }
	checkedValues, checkedErrors := 0, 0
	for iter := range 20 {
		lk := sqlLake(t)
		sess := lk.Session()
		var c, o []row
		for range rng.IntN(8) {
			c = append(c, row{val(4), val(4)})
		}
		for range 1 + rng.IntN(8) {
			o = append(o, row{val(5), val(4)})
		}
		script := "CREATE TABLE c (k INTEGER, y INTEGER); CREATE TABLE o (id INTEGER, k INTEGER, x INTEGER);"
		for _, r := range c {
			script += fmt.Sprintf("INSERT INTO c VALUES (%s, %s);", sqlOf(r.k), sqlOf(r.v))
		}
		for i, r := range o {
			script += fmt.Sprintf("INSERT INTO o VALUES (%d, %s, %s);", i, sqlOf(r.k), sqlOf(r.v))
		}
		mustExec(t, sess, script)

		// the oracle: the candidates of an outer row are the c rows whose k
		// equals its k (a NULL equals nothing)
		tv := func(b *bool) string {
			if b == nil {
				return "NULL"
			}
			return fmt.Sprint(*b)
		}
		var want []string
		tooMany := false
		for i, r := range o {
			var cand []row
			for _, cr := range c {
				if r.k != nil && cr.k != nil && *r.k == *cr.k {
					cand = append(cand, cr)
				}
			}
			// x IN (ys): TRUE on an equal y, else NULL if x or some y is NULL
			// and there are candidates, else FALSE
			in := new(bool)
			sawNull := false
			for _, cr := range cand {
				if r.v == nil || cr.v == nil {
					sawNull = true
				} else if *r.v == *cr.v {
					*in = true
				}
			}
			if !*in && sawNull {
				in = nil
			}
			var notIn *bool
			if in != nil {
				notIn = new(bool)
				*notIn = !*in
			}
			exists := false // EXISTS (… AND y > x)
			for _, cr := range cand {
				if r.v != nil && cr.v != nil && *cr.v > *r.v {
					exists = true
				}
			}
			scalar := "NULL"
			if len(cand) > 1 {
				tooMany = true
			} else if len(cand) == 1 {
				scalar = sqlOf(cand[0].v)
			}
			want = append(want, fmt.Sprintf("%d|%s|%s|%t|%s", i, tv(in), tv(notIn), exists, scalar))
		}

		var wantSets, wantScalar []string
		for _, w := range want {
			f := strings.Split(w, "|")
			wantSets = append(wantSets, strings.Join(f[:4], "|"))
			wantScalar = append(wantScalar, f[0]+"|"+f[4])
		}
		sets, err := sess.SQL(ctx, `SELECT id, x IN (SELECT y FROM c WHERE c.k = o.k), x NOT IN (SELECT y FROM c WHERE c.k = o.k),
			EXISTS (SELECT 1 FROM c WHERE c.k = o.k AND c.y > o.x) FROM o ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := collectRows(ctx, sets); err != nil || !slices.Equal(got, wantSets) {
			t.Fatalf("iteration %d: IN, NOT IN, EXISTS: %v\ngot  %v\nwant %v\nc=%v o=%v", iter, err, got, wantSets, c, o)
		}
		res, err := sess.SQL(ctx, `SELECT id, (SELECT y FROM c WHERE c.k = o.k) FROM o ORDER BY id`)
		if err == nil {
			var got []string
			got, err = collectRows(ctx, res)
			if err == nil && !tooMany {
				checkedValues++
				if !slices.Equal(got, wantScalar) {
					t.Fatalf("iteration %d: scalar\ngot  %v\nwant %v", iter, got, wantScalar)
				}
				continue
			}
		}
		if !tooMany || err == nil || !strings.Contains(err.Error(), "more than one row returned by a subquery used as an expression") {
			t.Fatalf("iteration %d: scalar: error %v, an outer row matched more than one: %v", iter, err, tooMany)
		}
		checkedErrors++
	}
	if checkedValues == 0 || checkedErrors == 0 {
		t.Fatalf("the scalar subquery was checked on %d values and %d errors; change the seed", checkedValues, checkedErrors)
	}
}

// collectRows renders a result's rows as "a|b" strings, NULL for nulls.
func collectRows(ctx context.Context, res *lake.Result) ([]string, error) {
	defer res.Close()
	bs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var vals []string
			for _, col := range b.Columns() {
				if col.IsNull(i) {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, col.ValueStr(i))
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
		b.Release()
	}
	return out, nil
}

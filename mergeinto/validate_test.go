package mergeinto_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

// Every refusal, with its text and SQLSTATE. Validate and Execute say the
// same thing; nothing is staged.
func TestRefusals(t *testing.T) {
	i32Source := schemaOf(field("sid", i32), field("sstatus", str), field("samount", i64))
	cases := []struct {
		name  string
		spec  func(t *testing.T) *mergeinto.Spec
		state string
		msg   string
	}{
		{"no equality", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), On: call(t, ">", col(tID, i64), col(sID, i64)),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateNotSupported,
			"merge into events: needs an ON condition that is a conjunction of `target.col = source.col` equalities; other predicates may be ANDed to them"},
		{"key types", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: []mergeinto.Key{{Target: tID, Source: col(1, str)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateDatatypeMismatch,
			"merge into events: ON id = #1 compares bigint with text: the join key types must match exactly. Cast in the USING subquery."},
		{"key decimal scales", func(t *testing.T) *mergeinto.Spec {
			s := schemaOf(field("d", &arrow.Decimal128Type{Precision: 10, Scale: 2}))
			return &mergeinto.Spec{Source: values(t, s), Keys: []mergeinto.Key{{Target: tID, Source: col(0, s.Field(0).Type)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateDatatypeMismatch, "the join key types must match exactly. Cast in the USING subquery."},
		{"not matched by source insert", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedBySource, Action: ins(t)}}}
		}, mergeinto.StateNotSupported,
			"merge into events: clause 1 (WHEN NOT MATCHED BY SOURCE ... THEN INSERT): it names no row to act on. Refusing rather than silently doing nothing."},
		{"not matched delete", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Delete()}}}
		}, mergeinto.StateSyntax, "DELETE is not allowed in a NOT MATCHED merge clause"},
		{"not matched update", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: upd(t)}}}
		}, mergeinto.StateSyntax, "UPDATE is not allowed in a NOT MATCHED merge clause"},
		{"matched insert", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: ins(t)}}}
		}, mergeinto.StateSyntax, "clause 1 (WHEN MATCHED ... THEN INSERT): INSERT is not allowed in a MATCHED merge clause"},
		{"no clauses", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID()}
		}, mergeinto.StateSyntax, "merge into events: needs at least one WHEN clause"},
		{"unreachable clause", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}, {Kind: mergeinto.Matched, Action: upd(t)}}}
		}, mergeinto.StateSyntax, "clause 3 (WHEN MATCHED ... THEN UPDATE) can never run: clause 1 of the same kind has no AND condition and takes every row first; add a condition to clause 1 or remove clause 3"},
		{"insert arity", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(sID, i64), col(sStatus, str))}}}
		}, mergeinto.StateSyntax, "INSERT has 2 values but the table has 3 columns"},
		{"insert value type", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(sID, i64), col(sAmount, i64), col(sAmount, i64))}}}
		}, mergeinto.StateDatatypeMismatch, `INSERT value 2 (#5) is bigint but column "status" is text; cast the value`},
		{"update unknown column", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(7, col(sID, i64)))}}}
		}, mergeinto.StateUndefinedColumn, "UPDATE SET: column #7 does not exist; the table has 3 columns"},
		{"update twice", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, col(sStatus, str)), set(tStatus, lit(t, "x")))}}}
		}, mergeinto.StateSyntax, `UPDATE SET assigns column "status" more than once`},
		{"update type", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, col(sID, i64)))}}}
		}, mergeinto.StateDatatypeMismatch, `SET status = #3: column "status" is text but the expression is bigint; cast the expression`},
		{"key column unknown", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: []mergeinto.Key{{Target: 9, Source: col(0, i64)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateUndefinedColumn, "ON: target column #9 does not exist; the table has 3 columns"},
		{"condition not boolean", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: col(sID, i64), Action: mergeinto.Delete()}}}
		}, mergeinto.StateDatatypeMismatch, "the condition #3 is bigint, not boolean"},
		{"on not boolean", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(), On: col(sID, i64),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateDatatypeMismatch, "ON: the condition #3 is bigint, not boolean"},
		{"merge-on-read is accepted", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(), Mode: mergeinto.MergeOnRead,
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, "", ""},
		{"unknown mode", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(), Mode: mergeinto.Mode(7),
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, mergeinto.StateNotSupported, "write mode Mode(7) is unknown; use copy-on-write or merge-on-read"},
		{"int widening is accepted", func(t *testing.T) *mergeinto.Spec {
			return &mergeinto.Spec{Source: values(t, i32Source), Keys: []mergeinto.Key{{Target: tID, Source: col(0, i32)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
		}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := basic(t)
			r := f.begin()
			spec := f.spec(r, tc.spec(t))
			err := mergeinto.Validate(spec)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantErr(t, err, tc.msg)
			var me *mergeinto.Error
			if !errors.As(err, &me) || me.SQLState() != tc.state {
				t.Fatalf("error %T state %v, want %s", err, me, tc.state)
			}
			if !errors.Is(err, mergeinto.ErrRefused) {
				t.Fatalf("%v does not wrap ErrRefused", err)
			}
			_, err = f.merge(tc.spec(t))
			wantErr(t, err, tc.msg)
			wantRows(t, f.rows(), "1|a|10", "2|b|20", "3|c|30")
		})
	}
}

func TestBinderBugs(t *testing.T) {
	f := basic(t)
	r := f.begin()
	for _, tc := range []struct {
		spec *mergeinto.Spec
		msg  string
	}{
		{nil, "merge: nil spec (binder bug)"},
		{&mergeinto.Spec{Table: "events"}, "merge into events: no target table (binder bug)"},
		{&mergeinto.Spec{Table: "events", Target: r.tbl}, "merge into events: no source (binder bug)"},
		{&mergeinto.Spec{Table: "events", Target: r.tbl, Source: values(t, sourceSchema), Keys: []mergeinto.Key{{Target: 0}}}, "merge into events: ON key 1 has no source expression (binder bug)"},
		{&mergeinto.Spec{Table: "events", Target: r.tbl, Source: values(t, sourceSchema), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}, Returning: []exec.Expr{nil}}, "RETURNING expression 1 is nil (binder bug)"},
	} {
		wantErr(t, mergeinto.Validate(tc.spec), tc.msg)
	}
	s := f.spec(r, &mergeinto.Spec{Source: values(t, sourceSchema), Keys: onID(), Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}})
	_, err := mergeinto.Execute(ctx, s, nil)
	wantErr(t, err, "merge into events: no transaction (binder bug)")
}

// A target row matched by two source rows fails with SQLSTATE 21000 and
// stages nothing; duplicate source keys that match no target row are
// fine.
func TestCardinality(t *testing.T) {
	f := basic(t)
	head := f.table().CurrentSnapshot().SnapshotID
	spec := func(rows ...[]any) *mergeinto.Spec {
		return &mergeinto.Spec{Source: values(t, sourceSchema, rows...), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}}
	}
	_, err := f.merge(spec([]any{1, "x", 1}, []any{3, "y", 2}, []any{3, "z", 3}))
	var ce *mergeinto.CardinalityError
	if !errors.As(err, &ce) || ce.SQLState() != "21000" {
		t.Fatalf("error %T %v", err, err)
	}
	wantErr(t, err, "merge into events: target row matched more than one source row (data file data/")
	wantErr(t, err, ".parquet, row 2; key id=3; source rows 1 and 2); narrow the ON condition or de-duplicate the source")
	if ce.Key != "id=3" || ce.Sources != [2]int64{1, 2} || ce.Row != 2 {
		t.Fatalf("error fields %+v", ce)
	}
	if f.table().CurrentSnapshot().SnapshotID != head {
		t.Fatal("head moved")
	}
	// Duplicates that match nothing are inserted twice.
	res := f.mustMerge(spec([]any{1, "x", 1}, []any{7, "y", 2}, []any{7, "z", 3}))
	wantRows(t, f.rows(), "1|x|1", "2|b|20", "3|c|30", "7|y|2", "7|z|3")
	if res.Count != 3 {
		t.Fatalf("count %d", res.Count)
	}
	// With a residual, only pairs that pass ON count.
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{3, "p", 1}, []any{3, "q", 99}), Keys: onID(),
		On:      call(t, ">", col(sAmount, i64), col(tAmount, i64)),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}}})
	wantRows(t, f.rows(), "1|x|1", "2|b|20", "3|q|99", "7|y|2", "7|z|3")
	_, err = f.merge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{3, "p", 100}, []any{3, "q", 100}), Keys: onID(),
		On:      call(t, ">", col(sAmount, i64), col(tAmount, i64)),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}}})
	if !errors.As(err, &ce) {
		t.Fatalf("residual duplicates: %v", err)
	}
	// Two source rows match a row, and only the later one's clause acts:
	// that one updates it, with no error (PostgreSQL's rule), with the
	// key alone and with a residual.
	for i, on := range []exec.Expr{nil, call(t, ">", col(sAmount, i64), lit(t, int64(0)))} {
		f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{2, "skip", 5}, []any{2, "take", 6 + i}, []any{7, "skip", 8}), Keys: onID(),
			On:      on,
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "=", col(sStatus, str), lit(t, "take")), Action: upd(t)}}})
		wantRows(t, f.rows(), "1|x|1", "2|take|"+strconv.Itoa(6+i), "3|q|99", "7|y|2", "7|z|3")
	}
	// An insert-only merge ignores duplicates that match.
	res = f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{7, "a", 0}, []any{7, "b", 0}, []any{8, "c", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}})
	if res.Count != 1 {
		t.Fatalf("count %d", res.Count)
	}
}

// 1.1M unique source keys against 1.1M target rows: no false duplicate.
func TestCardinalityAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("1.1M rows")
	}
	const n = 1_100_000
	schema := schemaOf(arrow.Field{Name: "k", Type: i64}, field("v", i64))
	f := newFixture(t, "big", schema)
	rows := func(off int64) (out []arrow.RecordBatch) {
		for lo := int64(0); lo < n; lo += 100_000 {
			var rs [][]any
			for i := lo; i < min(lo+100_000, n); i++ {
				rs = append(rs, []any{i*7 + off, i})
			}
			out = append(out, mustBatch(t, schema, rs...))
		}
		return out
	}
	tb := rows(0)
	rdr, _ := arrowReader(schema, tb)
	txn := f.table().NewTransaction()
	if err := txn.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	src := rows(0)
	op, err := exec.NewValues(schema, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range append(tb, src...) {
		b.Release()
	}
	res := f.mustMerge(&mergeinto.Spec{Source: op, Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "=", call(t, "%", col(3, i64), lit(t, int64(1000))), lit(t, int64(0))),
			Action: mergeinto.Update(set(1, call(t, "-", lit(t, int64(0)), col(3, i64))))}}})
	if res.Count != n/1000 {
		t.Fatalf("count %d", res.Count)
	}
}

// Keys of every common type, composite keys, and int32 vs int64 widening.
func TestKeyTypes(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 12, Scale: 2}
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	cases := []struct {
		name   string
		target *arrow.Schema
		source *arrow.Schema
		keys   int // key columns 0..keys-1 on both sides
		trows  [][]any
		srows  [][]any
		want   []string
	}{
		{"string", schemaOf(field("k", str), field("v", i64)), schemaOf(field("k", str), field("v", i64)), 1,
			[][]any{{"a", 1}, {"b", 2}}, [][]any{{"b", 20}, {"c", 30}},
			[]string{"a|1", "b|20", "c|30"}},
		{"decimal", schemaOf(field("k", dec), field("v", i64)), schemaOf(field("k", dec), field("v", i64)), 1,
			[][]any{{mustDec(t, "1.50", dec), 1}, {mustDec(t, "2.25", dec), 2}}, [][]any{{mustDec(t, "2.25", dec), 20}, {mustDec(t, "3.00", dec), 30}},
			[]string{"1.5|1", "2.25|20", "3|30"}},
		{"timestamp", schemaOf(field("k", ts), field("v", i64)), schemaOf(field("k", ts), field("v", i64)), 1,
			[][]any{{arrow.Timestamp(1_000_000), 1}, {arrow.Timestamp(2_000_000), 2}}, [][]any{{arrow.Timestamp(2_000_000), 20}, {arrow.Timestamp(3_000_000), 30}},
			[]string{"1970-01-01T00:00:01|1", "1970-01-01T00:00:02|20", "1970-01-01T00:00:03|30"}},
		{"composite", schemaOf(field("a", i64), field("b", str), field("v", i64)), schemaOf(field("a", i64), field("b", str), field("v", i64)), 2,
			[][]any{{1, "x", 1}, {1, "y", 2}, {2, "x", 3}}, [][]any{{1, "y", 20}, {2, "y", 40}},
			[]string{"1|x|1", "1|y|20", "2|x|3", "2|y|40"}},
		{"int32 target, int64 source", schemaOf(field("k", i32), field("v", i64)), schemaOf(field("k", i64), field("v", i64)), 1,
			[][]any{{1, 1}, {2, 2}}, [][]any{{2, 20}, {1 << 40, 30}},
			[]string{"1|1", "2|20"}},
		{"int64 target, int32 source", schemaOf(field("k", i64), field("v", i64)), schemaOf(field("k", i32), field("v", i64)), 1,
			[][]any{{1, 1}, {2, 2}}, [][]any{{2, 20}, {3, 30}},
			[]string{"1|1", "2|20", "3|30"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "t", tc.target)
			f.appendRows(tc.trows...)
			nt := tc.target.NumFields()
			var keys []mergeinto.Key
			for i := 0; i < tc.keys; i++ {
				keys = append(keys, mergeinto.Key{Target: i, Source: col(i, tc.source.Field(i).Type)})
			}
			vi := nt - 1
			var insert []exec.Expr
			for i := 0; i < nt; i++ {
				var e exec.Expr = col(nt+i, tc.source.Field(i).Type)
				if !arrow.TypeEqual(e.DataType(), tc.target.Field(i).Type) {
					var err error
					if e, err = exec.NewCast(e, tc.target.Field(i).Type, false); err != nil {
						t.Fatal(err)
					}
				}
				insert = append(insert, e)
			}
			clauses := []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(vi, col(nt+vi, i64)))}}
			if tc.name != "int32 target, int64 source" {
				clauses = append(clauses, mergeinto.Clause{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(insert...)})
			}
			f.mustMerge(&mergeinto.Spec{Source: values(t, tc.source, tc.srows...), Keys: keys, Clauses: clauses})
			wantRows(t, f.rows(), tc.want...)
		})
	}
}

func TestPartitionedTarget(t *testing.T) {
	schema := schemaOf(arrow.Field{Name: "id", Type: i64}, field("region", str), field("amount", i64))
	f := newFixture(t, "sales", schema, "region")
	f.appendRows([]any{1, "eu", 10}, []any{2, "eu", 20}, []any{3, "us", 30}, []any{4, "ap", 40})
	if f.files() != 3 {
		t.Fatalf("%d files", f.files())
	}
	src := schemaOf(field("id", i64), field("region", str), field("amount", i64))
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, src, []any{1, "eu", 11}, []any{2, "us", 21}, []any{5, "us", 50}),
		Keys:   []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Clauses: []mergeinto.Clause{
			// Row 2 moves from eu to us: its partition value is recomputed.
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(1, col(4, str)), set(2, col(5, i64)))},
			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(3, i64), col(4, str), col(5, i64))},
		},
	})
	wantRows(t, f.rows(), "1|eu|11", "2|us|21", "3|us|30", "4|ap|40", "5|us|50")
	// Only the eu file held a match; the us and ap files are pruned by
	// the key range (ids 1..5 overlap them, so not pruned there) or kept.
	if res.Metrics.FilesRemoved != 1 {
		t.Fatalf("metrics %s", res.Metrics)
	}
	// Every file's rows lie in one partition: scan by partition.
	tbl := f.table()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		p := task.File.Partition()
		if len(p) != 1 {
			t.Fatalf("partition %v", p)
		}
	}
	us := tableRowsFiltered(t, tbl, "region", "us")
	wantRows(t, us, "2|us|21", "3|us|30", "5|us|50")
}

package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
)

// Kind is what a planned Statement does.
type Kind int

const (
	KindQuery Kind = iota
	KindInsert
	KindDelete
	KindUpdate
	KindMerge
	KindAlter
	KindCreate
)

func (k Kind) String() string {
	return [...]string{"query", "insert", "delete", "update", "merge", "alter table", "create table"}[k]
}

// Statement is a planned statement: what Planner.Plan returns for every
// statement kind it plans. Kind says which part is set:
//
//	KindQuery   Query
//	KindInsert, KindDelete, KindUpdate, KindMerge
//	            Write, the DML root (UPDATE … FROM is KindMerge)
//	KindAlter   Alter
//	KindCreate  Create (CREATE TABLE with columns or AS; CLONE is lake's)
//
// lake runs a Statement (a query's operators, or a write inside its
// commit) and renders EXPLAIN with Explain.
type Statement struct {
	Kind   Kind
	Target *TableRef
	Query  *Plan
	Write  *Write
	Alter  *Alter
	Create *Create
}

// Release frees what the statement holds before it runs.
func (s *Statement) Release() {
	if s.Write != nil {
		s.Write.Release()
	}
}

// Plan binds and plans one statement: a query, INSERT, DELETE, UPDATE,
// MERGE, CREATE TABLE (columns or AS) or ALTER TABLE's schema evolution. With explain it plans for
// EXPLAIN: nothing that reads data runs (no init plan, no key-range
// skipping, no RETURNING binding). Other statement kinds (DDL on the
// catalog, COPY, SET, SHOW, transactions) are lake's own.
func (p *Planner) Plan(ctx context.Context, stmt parser.Stmt, explain bool) (*Statement, error) {
	switch st := stmt.(type) {
	case *parser.Query:
		q, err := p.Query(ctx, st)
		if err != nil {
			return nil, err
		}
		return &Statement{Kind: KindQuery, Query: q}, nil
	case *parser.Insert:
		ref, err := p.target(ctx, st.Table, st.Pos)
		if err != nil {
			return nil, err
		}
		if st.OnConflict != nil {
			m, err := p.onConflictMerge(ctx, st, ref)
			if err != nil {
				return nil, err
			}
			return p.planMerge(ctx, m, "insert", explain)
		}
		q, err := p.Insert(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		w := &Write{Op: WriteInsert, Target: ref, Snapshot: ref.Table.CurrentSnapshot(), Rows: q}
		if len(st.Returning) > 0 && !explain {
			if w.Returning, err = p.BindReturning(ctx, ref, st.Alias, st.Returning); err != nil {
				return nil, err
			}
		}
		return &Statement{Kind: KindInsert, Target: ref, Write: w}, nil
	case *parser.Update:
		if len(st.From) > 0 {
			m, err := updateFromMerge(st)
			if err != nil {
				return nil, err
			}
			return p.planMerge(ctx, m, "update", explain)
		}
		if st.With != nil {
			return nil, &Error{Pos: st.Pos, Err: ErrNotSupported, Msg: "UPDATE with WITH is not supported yet; use a subquery"}
		}
		return p.planWrite(ctx, st, st.Table, KindUpdate, explain)
	case *parser.Delete:
		if st.With != nil {
			return nil, &Error{Pos: st.Pos, Err: ErrNotSupported, Msg: "DELETE with WITH is not supported yet; use a subquery"}
		}
		return p.planWrite(ctx, st, st.Table, KindDelete, explain)
	case *parser.Merge:
		return p.planMerge(ctx, st, "merge", explain)
	case *parser.CreateTable:
		if st.Clone != nil {
			break
		}
		c, err := p.CreateTable(ctx, st)
		if err != nil {
			return nil, err
		}
		return &Statement{Kind: KindCreate, Create: c}, nil
	case *parser.AlterTable:
		ref, err := p.target(ctx, st.Name, st.Pos)
		if err != nil {
			return nil, err
		}
		a, err := p.AlterTable(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		return &Statement{Kind: KindAlter, Target: ref, Alter: a}, nil
	}
	return nil, fmt.Errorf("plan: %s statements are planned by lake, not plan (%w)", StatementKind(stmt), ErrNotSupported)
}

// StatementKind is a statement's first word, upper-cased ("ALTER",
// "VACUUM"), for "… is not supported" messages.
func StatementKind(stmt parser.Stmt) string {
	s := stmt.String()
	if i := strings.IndexAny(s, " \n"); i > 0 {
		s = s[:i]
	}
	return strings.ToUpper(s)
}

// target resolves the table a statement writes.
func (p *Planner) target(ctx context.Context, n parser.Name, pos parser.Pos) (*TableRef, error) {
	ref, err := p.Catalog.LookupTable(ctx, nameParts(n))
	if err != nil {
		return nil, atPos(pos, err)
	}
	return ref, nil
}

func (p *Planner) planWrite(ctx context.Context, st parser.Stmt, tn *parser.TableName, kind Kind, explain bool) (*Statement, error) {
	if tn.AsOf != nil {
		return nil, errorf(tn.Pos, "cannot write to a time-travel read of %s", tn.Name)
	}
	ref, err := p.target(ctx, tn.Name, tn.Pos)
	if err != nil {
		return nil, err
	}
	w, err := p.Write(ctx, st, ref, ref.Table.CurrentSnapshot(), explain)
	if err != nil {
		return nil, err
	}
	return &Statement{Kind: kind, Target: ref, Write: w}, nil
}

func (p *Planner) planMerge(ctx context.Context, m *parser.Merge, modeOp string, explain bool) (*Statement, error) {
	ref, err := p.target(ctx, m.Target, m.Pos)
	if err != nil {
		return nil, err
	}
	var b *binder
	spec, err := p.merge(ctx, m, ref, modeOp, explain, &b)
	if err != nil {
		return nil, err
	}
	w := &Write{Op: WriteMerge, Target: ref, Snapshot: spec.Snapshot, Mode: spec.Mode, Merge: spec, binder: b}
	return &Statement{Kind: KindMerge, Target: ref, Write: w}, nil
}

// updateFromMerge rewrites UPDATE t SET … FROM s WHERE … as the MERGE
// INTO t USING s ON <where> WHEN MATCHED THEN UPDATE SET … it means (FROM
// a, b, …: USING a CROSS JOIN b …), so
// WHERE must relate t to s by at least one equality. Unlike Postgres,
// which updates a target row from an arbitrary one of several matching
// source rows, a second match is an error (the MERGE cardinality rule).
func updateFromMerge(st *parser.Update) (*parser.Merge, error) {
	if st.Where == nil {
		return nil, errorf(st.Pos, "UPDATE … FROM needs a WHERE clause relating %s to the FROM table", st.Table.Name)
	}
	if len(st.Returning) > 0 || st.With != nil || st.Table.AsOf != nil {
		return nil, &Error{Pos: st.Pos, Err: ErrNotSupported, Msg: "UPDATE … FROM with WITH, RETURNING or time travel is not supported yet"}
	}
	var alias parser.Ident
	if st.Table.Alias != nil {
		alias = st.Table.Alias.Name
	}
	// several FROM items are their cross join; the WHERE conjuncts that
	// read only them filter it before the MERGE's join (plan.merge), so
	// a.k = b.k joins them by hash
	source := st.From[0]
	for _, f := range st.From[1:] {
		source = &parser.Join{Pos: f.Position(), Kind: parser.CrossJoin, Left: source, Right: f}
	}
	return &parser.Merge{Pos: st.Pos, Target: st.Table.Name, TargetAlias: alias, Source: source, On: st.Where,
		Clauses: []*parser.MergeClause{{Pos: st.Pos, Kind: parser.Matched, Action: &parser.MergeUpdate{Pos: st.Pos, Set: st.Set}}}}, nil
}

// Explain renders EXPLAIN of any planned statement, or, given what it did
// (EXPLAIN ANALYZE ran it), what it did: the one renderer for every kind.
// done is the merge's or rewrite's result for MERGE, DELETE and UPDATE,
// and inserted the rows of an INSERT.
func (s *Statement) Explain(ctx context.Context, analyzed bool, done *mergeinto.Result, inserted int64) (string, error) {
	switch s.Kind {
	case KindQuery:
		return s.Query.Explain(ctx, analyzed)
	case KindInsert:
		if analyzed {
			return fmt.Sprintf("INSERT INTO %s: %d rows\n", s.Target.Name, inserted), nil
		}
		text, err := s.Write.Rows.Explain(ctx, false)
		if err != nil {
			return "", err
		}
		return "INSERT INTO " + s.Target.Name + "\n" + text, nil
	case KindDelete, KindUpdate:
		if !analyzed {
			return s.Write.Explain(), nil
		}
		if text := s.Write.Summary(done); text != "" {
			return text, nil
		}
		return "no rows matched; nothing committed\n", nil
	case KindMerge:
		var sb strings.Builder
		sb.WriteString(mergeinto.Explain(s.Write.Merge, done))
		writeInits(&sb, s.Write.binder, "  ")
		return sb.String(), nil
	}
	return "", fmt.Errorf("EXPLAIN of %s is %w", s.Kind, ErrNotSupported)
}

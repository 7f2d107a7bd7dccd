package lake

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/parser"
)

// Description is what a statement will take and return, found without
// running it: what a client's prepared statement learns (PostgreSQL's
// Describe, database/sql's NumInput).
type Description struct {
	// Params are the types the statement's parameters $1, $2, … take
	// from their context (`id = $1` makes $1 the type of id). A nil entry
	// is a parameter no context types, such as `SELECT $1`; it is text,
	// as in PostgreSQL.
	Params []arrow.DataType
	// Schema is the rows the statement returns; nil when it returns
	// none (DDL, a transaction statement, DML without RETURNING).
	Schema *arrow.Schema
}

// NumParams is the number of parameters stmt refers to: the highest $n,
// or the count of ? placeholders.
func NumParams(stmt parser.Stmt) int {
	n := 0
	parser.Inspect(stmt, func(x parser.Node) bool {
		if p, ok := x.(*parser.Param); ok && p.Index > n {
			n = p.Index
		}
		return true
	})
	return n
}

// Describe plans stmt without running it and reports its parameters'
// types and its result's schema. nparams is the number of parameters the
// client declared, at least NumParams(stmt). Nothing is read or written:
// a query is bound and planned only, and so is a write (with RETURNING,
// its planning may read the MERGE source's keys). SHOW, SHOW TABLES and
// DESCRIBE, which change nothing, are run for their schema.
func (s *Session) Describe(ctx context.Context, stmt parser.Stmt, nparams int) (*Description, error) {
	if stmt == nil {
		return nil, &sentinelError{ErrInvalidArgument, errDescribeNothing}
	}
	nparams = max(nparams, NumParams(stmt))
	d := &Description{Params: make([]arrow.DataType, nparams)}
	var returning bool
	switch st := stmt.(type) {
	case *parser.Query:
	case *parser.Insert:
		returning = st.Returning != nil
	case *parser.Update:
		returning = st.Returning != nil
	case *parser.Delete:
		returning = st.Returning != nil
	case *parser.Merge:
		returning = st.Returning != nil
	case *parser.AlterTable:
		for _, a := range st.Actions {
			if _, ok := a.(*parser.ExecuteProcedure); ok {
				d.Schema = arrow.NewSchema([]arrow.Field{{Name: "result", Type: arrow.BinaryTypes.String}}, nil)
			}
		}
		return d, nil
	case *parser.Explain:
		d.Schema = arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}}, nil)
		return d, nil
	case *parser.Show, *parser.ShowTables, *parser.Describe, *parser.ShowTblProperties, *parser.ShowCreateTable:
		res, err := s.Run(ctx, stmt)
		if err != nil {
			return nil, err
		}
		d.Schema = res.Schema()
		res.Close()
		return d, nil
	default:
		return d, nil
	}
	if s.tx != nil && s.tx.aborted != nil {
		return nil, &TxAbortedError{Cause: s.tx.aborted}
	}
	p := s.planner(time.Now())
	p.ParamTypes = d.Params
	ps, err := p.Plan(ctx, stmt, !returning)
	if err != nil {
		return nil, sqlError(translate(err))
	}
	defer ps.Release()
	switch {
	case ps.Query != nil:
		d.Schema = ps.Query.Schema()
	case ps.Write != nil && ps.Write.Returning != nil:
		d.Schema = ps.Write.Returning.Schema()
	}
	return d, nil
}

var errDescribeNothing = errors.New("describe: no statement")

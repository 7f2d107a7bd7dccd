package plan

import (
	"strings"

	"github.com/skadedb/skade/parser"
)

// Ordered-set aggregates. PostgreSQL's percentile_cont(f),
// percentile_disc(f) and mode() WITHIN GROUP (ORDER BY x), and DuckDB's
// median(x), quantile_cont(x, f) and mode(x), bind as a function of the
// group's values in the WITHIN GROUP order:
//
//	percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FILTER (WHERE c)
//
// is
//
//	"percentile_cont#list"(array_agg(x ORDER BY x) FILTER (WHERE x IS NOT NULL AND (c)), 0.5)
//
// (exec/percentile.go). The direct argument, the fraction, is evaluated
// once per group, so like any expression outside an aggregate it may
// read only constants and grouped columns. NULL values are left out, and
// a group without values gives NULL, as in PostgreSQL.

// orderedSetNames are the ordered-set aggregates and the list function
// each binds to.
var orderedSetNames = map[string]string{
	"percentile_cont": "percentile_cont#list",
	"percentile_disc": "percentile_disc#list",
	"mode":            "mode#list",
	"median":          "median#list",
	"quantile_cont":   "percentile_cont#list",
}

func init() {
	for n := range orderedSetNames {
		aggregateNames[n] = true
	}
}

// orderedSetCall rewrites e, a call of the ordered-set aggregate name, as
// the list function over array_agg it means.
func orderedSetCall(e *parser.FuncCall, name string) (parser.Expr, error) {
	if e.Over != nil || !e.OverName.Empty() {
		return nil, errorf(e.Pos, "OVER is not supported for ordered-set aggregate %s", name)
	}
	if e.Distinct || e.Star || len(e.OrderBy) > 0 {
		return nil, errorf(e.Pos, "%s takes no DISTINCT, * or ORDER BY among its arguments; order its values in WITHIN GROUP (ORDER BY …)", name)
	}
	for _, a := range e.Args {
		if na, ok := a.(*parser.NamedArg); ok {
			return nil, errorf(na.Pos, "function %s takes no named arguments", name)
		}
	}
	var by *parser.OrderItem
	var direct []parser.Expr
	switch {
	case len(e.WithinGroup) > 0:
		if name == "median" || name == "quantile_cont" {
			return nil, errorf(e.Pos, "%s takes its value as an argument, without WITHIN GROUP; or use percentile_cont(f) WITHIN GROUP (ORDER BY x)", name)
		}
		if len(e.WithinGroup) != 1 {
			return nil, errorf(e.WithinGroup[1].Pos, "%s orders one value: WITHIN GROUP (ORDER BY x)", name)
		}
		want := 1
		if name == "mode" {
			want = 0
		}
		if len(e.Args) != want {
			return nil, errorf(e.Pos, "function %s takes %d direct argument%s before WITHIN GROUP, got %d", name, want, map[bool]string{true: "s"}[want != 1], len(e.Args))
		}
		by, direct = e.WithinGroup[0], e.Args
	case name == "median" || name == "mode":
		if len(e.Args) != 1 {
			return nil, errorf(e.Pos, "function %s takes one argument, got %d", name, len(e.Args))
		}
		by = &parser.OrderItem{Pos: e.Args[0].Position(), Expr: e.Args[0]}
	case name == "quantile_cont":
		if len(e.Args) != 2 {
			return nil, errorf(e.Pos, "function quantile_cont takes a value and a fraction, got %d arguments", len(e.Args))
		}
		by, direct = &parser.OrderItem{Pos: e.Args[0].Position(), Expr: e.Args[0]}, e.Args[1:]
	default:
		return nil, errorf(e.Pos, "WITHIN GROUP is required for ordered-set aggregate %s: %s(…) WITHIN GROUP (ORDER BY x)", name, name)
	}
	var filter parser.Expr = &parser.IsExpr{Pos: by.Pos, X: by.Expr, Not: true, Test: parser.IsNull}
	if e.Filter != nil {
		filter = &parser.BinaryExpr{Pos: e.Filter.Position(), Op: parser.OpAnd, L: filter, R: e.Filter}
	}
	values := &parser.FuncCall{Pos: e.Pos, Name: parser.Name{{Pos: e.Pos, Name: "array_agg"}}, Args: []parser.Expr{by.Expr},
		OrderBy: []*parser.OrderItem{by}, Filter: filter}
	fn := orderedSetNames[name]
	return &parser.FuncCall{Pos: e.Pos, Name: parser.Name{{Pos: e.Pos, Name: fn, Quoted: true}}, Args: append([]parser.Expr{values}, direct...)}, nil
}

// withinGroupOf refuses WITHIN GROUP on a function that is not an
// ordered-set aggregate.
func withinGroupOf(e *parser.FuncCall, name string) error {
	if len(e.WithinGroup) > 0 {
		if _, ok := orderedSetNames[name]; !ok {
			return errorf(e.Pos, "WITHIN GROUP specified, but %s is not an ordered-set aggregate function", strings.ToLower(name))
		}
	}
	return nil
}

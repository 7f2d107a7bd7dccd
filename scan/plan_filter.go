package scan

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// PlanFilter returns the part of filter that is safe to plan snap's files
// with (table.WithRowFilter on PlanFiles).
//
// iceberg-go writes a manifest's partition summary for a string (or
// binary) partition field without a lower bound when the smallest value
// is the empty string, and then reads the missing bound as "no non-null
// value": with the empty string among its values a manifest is pruned
// for every predicate on the column, and its files' rows vanish from
// queries, DELETE, UPDATE and MERGE alike (an equality delete file pruned
// so brings deleted rows back). Such a summary has no lower bound; with
// NULLs beside the empty strings it cannot be told from an all-NULL one
// (the upper bound goes too when it is the empty string), so any string
// summary without a lower bound counts.
// When any manifest of snap has one, predicates on that field's source
// column are left out of planning; the file-level partition values are
// right, but planning cannot use one without the other. Without such a
// manifest the filter is returned as it is.
//
// The result is implied by filter, so whoever evaluates filter above the
// scan still gets the right rows.
func PlanFilter(ctx context.Context, tbl *table.Table, snap *table.Snapshot, filter iceberg.BooleanExpression) iceberg.BooleanExpression {
	if filter == nil || tbl == nil || snap == nil {
		return filter
	}
	if filter = EmptyStringSafe(filter, tbl.Metadata().CurrentSchema()); filter == nil {
		return nil
	}
	cols := brokenSummaryColumns(ctx, tbl, snap)
	if len(cols) == 0 {
		return filter
	}
	return Weaken(filter, func(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
		if ref, ok := p.Term().(iceberg.Reference); ok && !cols[strings.ToLower(string(ref))] {
			return p
		}
		return nil
	}, nil)
}

// brokenSummaries caches, by manifest list path (a file never rewritten),
// the lowercased source columns of partition summaries PlanFilter cannot
// trust.
var brokenSummaries sync.Map // string -> map[string]bool

func brokenSummaryColumns(ctx context.Context, tbl *table.Table, snap *table.Snapshot) map[string]bool {
	if v, ok := brokenSummaries.Load(snap.ManifestList); ok {
		return v.(map[string]bool)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil // PlanFiles reports the error itself
	}
	meta := tbl.Metadata()
	schema := meta.CurrentSchema()
	cols := map[string]bool{}
	for _, mf := range manifests {
		spec := meta.PartitionSpecByID(int(mf.PartitionSpecID()))
		if spec == nil {
			continue
		}
		for i, fs := range mf.Partitions() {
			if i >= spec.NumFields() || fs.LowerBound != nil {
				continue
			}
			pf := spec.Field(i)
			src, ok := schema.FindFieldByID(pf.SourceID())
			if !ok {
				continue
			}
			switch pf.Transform.ResultType(src.Type).(type) {
			case iceberg.StringType, iceberg.BinaryType:
				cols[strings.ToLower(src.Name)] = true
			}
		}
	}
	brokenSummaries.Store(snap.ManifestList, cols)
	return cols
}

// EmptyStringSafe returns filter without the leaves on string columns
// that the empty string satisfies (equal to it, less than 'x', at most
// anything, unequal to 'x', IN a list holding it, NOT IN a list without
// it), as far as schema can bind it; leaves it cannot bind are dropped
// too. It is implied by filter.
//
// iceberg-go's writer (through arrow-go's Parquet statistics) leaves the
// empty string out of a string column's lower bound: a file or row group
// holding it and 'd' has the lower bound 'd', so pruning by such a leaf
// may skip the rows holding the empty string. Leaves it does not satisfy
// prune soundly: the bounds are right for every other value.
//
// Leaves comparing with a NaN literal are dropped too: no bounds hold a
// NaN, so iceberg-go prunes every file for x = NaN, while the engine, as
// PostgreSQL, takes NaN as equal to itself. SQL never hands such a leaf
// to pruning (plan.icebergLiteral); a Go API filter
// (lake.Filter(iceberg.EqualTo(ref, math.NaN()))) did, and lost the rows.
func EmptyStringSafe(filter iceberg.BooleanExpression, schema *iceberg.Schema) iceberg.BooleanExpression {
	if filter == nil || schema == nil {
		return filter
	}
	pushed, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil
	}
	bound, err := iceberg.BindExpr(schema, pushed, false /* caseSensitive */)
	if err != nil {
		return nil
	}
	return Weaken(bound, nil, func(p iceberg.BoundPredicate) iceberg.BooleanExpression {
		if comparesNaN(p) {
			return nil
		}
		return orNaN(p, emptySafeLeaf(schema, p))
	})
}

// orNaN is leaf, the unbound form of p, or'ed with "p's column is NaN"
// when p is a comparison on a floating-point column that a NaN satisfies
// in SQL but not by iceberg-go's evaluators.
//
// The engine orders NaN above every number, as PostgreSQL does: NaN > 5,
// NaN >= 5, NaN <> 5 and NaN NOT IN (1, 2) are true. Iceberg's evaluators
// take every comparison with NaN as false, and a file's bounds leave NaN
// out, so a file holding 3 and NaN, upper bound 3, was pruned for x > 5,
// and its NaN row was lost from the query (and from a DELETE's or
// UPDATE's rewrite). With "OR x IS NaN" such a file is kept unless its
// metrics count no NaN (nan_value_counts, written by skade's writers and
// by Spark's); a file without NaN counts is kept.
func orNaN(p iceberg.BoundPredicate, leaf iceberg.BooleanExpression) iceberg.BooleanExpression {
	switch p.Ref().Field().Type.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
	default:
		return leaf
	}
	switch p.Op() {
	case iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpNEQ, iceberg.OpNotIn:
	default: // <, <=, =, IN: NaN satisfies none (NaN literals are left out above)
		return leaf
	}
	if _, all := leaf.(iceberg.AlwaysTrue); all {
		return leaf
	}
	un, ok := leaf.(iceberg.UnboundPredicate)
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	return iceberg.NewOr(leaf, iceberg.IsNaN(un.Term()))
}

// comparesNaN reports whether p compares with a NaN literal.
func comparesNaN(p iceberg.BoundPredicate) bool {
	nan := func(l iceberg.Literal) bool {
		switch v := l.Any().(type) {
		case float32:
			return math.IsNaN(float64(v))
		case float64:
			return math.IsNaN(v)
		}
		return false
	}
	switch lp := p.(type) {
	case iceberg.BoundLiteralPredicate:
		return nan(lp.Literal())
	case iceberg.BoundSetPredicate:
		return slices.ContainsFunc(lp.Literals().Members(), nan)
	}
	return false
}

// emptySafeLeaf is p, unbound again, unless p is a leaf on a string
// column that ” satisfies; then nil (TRUE).
func emptySafeLeaf(schema *iceberg.Schema, p iceberg.BoundPredicate) iceberg.BooleanExpression {
	f := p.Ref().Field()
	name, ok := schema.FindColumnName(f.ID)
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	ref := iceberg.Reference(name)
	if _, isString := f.Type.(iceberg.StringType); !isString {
		return asUnbound(p, ref)
	}
	str := func(l iceberg.Literal) string { return fmt.Sprint(l.Any()) }
	matchesEmpty := false
	switch q := p.(type) {
	case iceberg.BoundLiteralPredicate:
		lit := str(q.Literal())
		switch p.Op() {
		case iceberg.OpEQ, iceberg.OpGTEQ:
			matchesEmpty = lit == ""
		case iceberg.OpLT, iceberg.OpNEQ:
			matchesEmpty = lit != ""
		case iceberg.OpLTEQ:
			matchesEmpty = true
		case iceberg.OpGT:
			matchesEmpty = false
		case iceberg.OpStartsWith:
			matchesEmpty = lit == ""
		case iceberg.OpNotStartsWith:
			matchesEmpty = lit != ""
		default:
			matchesEmpty = true
		}
	case iceberg.BoundSetPredicate:
		hasEmpty := false
		for _, l := range q.Literals().Members() {
			if str(l) == "" {
				hasEmpty = true
			}
		}
		matchesEmpty = hasEmpty == (p.Op() == iceberg.OpIn)
	default: // IS NULL, NOT NULL, NaN: bounds play no part
	}
	if matchesEmpty {
		return iceberg.AlwaysTrue{}
	}
	return asUnbound(p, ref)
}

// asUnbound turns a bound leaf back into the unbound predicate it was
// bound from, on ref.
func asUnbound(p iceberg.BoundPredicate, ref iceberg.Reference) iceberg.BooleanExpression {
	switch q := p.(type) {
	case iceberg.BoundLiteralPredicate:
		return q.AsUnbound(ref, q.Literal())
	case iceberg.BoundSetPredicate:
		return q.AsUnbound(ref, q.Literals().Members())
	case iceberg.BoundUnaryPredicate:
		return q.AsUnbound(ref)
	}
	return iceberg.AlwaysTrue{}
}

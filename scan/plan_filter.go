package scan

import (
	"context"
	"fmt"
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
// value": with `v = ”` among its values a manifest is pruned for every
// predicate on v, and its files' rows vanish from queries, DELETE, UPDATE
// and MERGE alike (an equality delete file pruned so brings deleted rows
// back). Such a summary has no lower bound; with NULLs beside the empty
// strings it cannot be told from an all-NULL one (the upper bound goes
// too when it is ”), so any string summary without a lower bound counts.
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
	pushed, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil
	}
	out, err := iceberg.VisitExpr(pushed, dropColumns{cols: cols})
	if err != nil || out.Equals(iceberg.AlwaysTrue{}) {
		return nil
	}
	return out
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

// dropColumns replaces the leaf predicates on cols by TRUE.
type dropColumns struct{ cols map[string]bool }

func (dropColumns) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (dropColumns) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (dropColumns) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{} // RewriteNotExpr leaves none
}
func (dropColumns) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (dropColumns) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (d dropColumns) VisitUnbound(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
	if ref, ok := p.Term().(iceberg.Reference); ok && !d.cols[strings.ToLower(string(ref))] {
		return p
	}
	return iceberg.AlwaysTrue{}
}
func (dropColumns) VisitBound(iceberg.BoundPredicate) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}

// EmptyStringSafe returns filter without the leaves on string columns
// that the empty string satisfies (c = ”, c < 'x', c <= …, c <> 'x',
// c IN (…, ”, …), c NOT IN (…)), as far as schema can bind it; leaves it
// cannot bind are dropped too. It is implied by filter.
//
// iceberg-go's writer (through arrow-go's Parquet statistics) leaves ”
// out of a string column's lower bound: a file or row group holding ”
// and 'd' has the lower bound 'd', so every pruning by such a leaf may
// skip the rows holding ”. Leaves that ” does not satisfy prune
// soundly, since the bounds are right for every other value.
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
	out, err := iceberg.VisitExpr(bound, emptySafe{schema: schema})
	if err != nil || out.Equals(iceberg.AlwaysTrue{}) {
		return nil
	}
	return out
}

type emptySafe struct{ schema *iceberg.Schema }

func (emptySafe) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (emptySafe) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (emptySafe) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{} // binding pushes NOT into the leaves
}
func (emptySafe) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (emptySafe) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (emptySafe) VisitUnbound(iceberg.UnboundPredicate) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}

func (v emptySafe) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression {
	f := p.Ref().Field()
	name, ok := v.schema.FindColumnName(f.ID)
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

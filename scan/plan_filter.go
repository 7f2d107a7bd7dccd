package scan

import (
	"context"
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
// back). Such a summary is recognisable: no lower bound, yet no NULL. When
// any manifest of snap has one, predicates on that field's source column
// are left out of planning; the file-level partition values are right,
// but planning cannot use one without the other. Without such a manifest
// the filter is returned as it is.
//
// The result is implied by filter, so whoever evaluates filter above the
// scan still gets the right rows.
func PlanFilter(ctx context.Context, tbl *table.Table, snap *table.Snapshot, filter iceberg.BooleanExpression) iceberg.BooleanExpression {
	if filter == nil || tbl == nil || snap == nil {
		return filter
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
			if i >= spec.NumFields() || fs.LowerBound != nil || fs.ContainsNull {
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

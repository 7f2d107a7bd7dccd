package scan

import (
	"cmp"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
)

// Row groups a plain read leaves unread. A query's scan whose row filter
// is only for pruning (ReadSpec.Filter: the planner tests the query's own
// predicate above the scan) is read page by page too: the filter's safe
// form (pruneLeaf) is tested against each row group's Parquet statistics,
// and a row group none of whose rows can pass is not read. The rows of the
// groups read all come back; the predicate above drops those that fail
// it. Integer, DATE, microsecond TIMESTAMP, string and floating-point
// columns are judged by their statistics; anything else, and any row
// group without statistics, is read. A read by dictionary (dictread.go)
// tests its row groups the same way before it reads their dictionaries.

// groupPruner is a scan's read filter bound to its schema, for testing
// row groups' statistics.
type groupPruner struct {
	expr iceberg.BooleanExpression
}

// compileGroupPruner is filter (a scan's pruning filter over schema) for
// testing row groups; nil where nothing of it can rule a row group out.
func compileGroupPruner(filter iceberg.BooleanExpression, schema *iceberg.Schema) *groupPruner {
	rf := safeForm(filter, schema, pruneLeaf)
	if rf == nil {
		return nil
	}
	b, err := iceberg.BindExpr(schema, rf, false)
	if err != nil || b.Equals(iceberg.AlwaysTrue{}) {
		return nil
	}
	return &groupPruner{expr: b}
}

// pruneLeaf is the form of one leaf row groups are tested by: itself on
// a column of a type ReadFilter keeps (safeFilterType), for the tests
// groupStats makes; TRUE otherwise. Unlike ReadFilter's, a comparison is
// not widened with "OR c IS NULL": that answers iceberg-go's reading of
// value counts, and groupStats reads the null count itself (a NULL
// satisfies no comparison). Text's STARTS WITH, a LIKE 'prefix%', which
// iceberg-go's reader does not take, is kept.
func pruneLeaf(p iceberg.UnboundPredicate, schema *iceberg.Schema) iceberg.BooleanExpression {
	ref, ok := p.Term().(iceberg.Reference)
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	f, ok := schema.FindFieldByNameCaseInsensitive(string(ref))
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	switch f.Type.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		// judged by statistics, which leave NaN out: sound for the
		// comparisons no NaN passes, and for > and >= beside the
		// "OR x IS NaN" EmptyStringSafe gives them, which the file's
		// NaN count settles (groupStats)
		if p.Op() == iceberg.OpIsNan {
			return p
		}
	default:
		if !safeFilterType(f.Type) {
			return iceberg.AlwaysTrue{}
		}
	}
	switch p.Op() {
	case iceberg.OpIsNull, iceberg.OpEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpIn:
		return p
	case iceberg.OpStartsWith:
		if _, isString := f.Type.(iceberg.StringType); isString {
			return p
		}
	}
	return iceberg.AlwaysTrue{} // <>, NOT IN, IS NOT NULL, NaN tests: nothing to prune by
}

// mayMatch reports whether a row of row group g of the file whose footer
// is meta may pass the filter, by the group's statistics; nan are the
// data file's NaN counts (its Iceberg metrics), which settle x IS NaN.
func (gp *groupPruner) mayMatch(meta *metadata.FileMetaData, g int, nan map[int]int64) bool {
	if gp == nil || g < 0 || g >= meta.NumRowGroups() {
		return true
	}
	may, err := iceberg.VisitExpr(gp.expr, groupStats{meta: meta, rg: meta.RowGroup(g), nan: nan})
	return err != nil || may
}

// groupStats evaluates a bound filter on one row group's statistics:
// false only where no row of the group can pass.
type groupStats struct {
	meta *metadata.FileMetaData
	rg   *metadata.RowGroupMetaData
	nan  map[int]int64 // the data file's NaN counts, by field id
}

func (groupStats) VisitTrue() bool                            { return true }
func (groupStats) VisitFalse() bool                           { return false }
func (groupStats) VisitNot(bool) bool                         { return true } // ReadFilter leaves none
func (groupStats) VisitAnd(l, r bool) bool                    { return l && r }
func (groupStats) VisitOr(l, r bool) bool                     { return l || r }
func (groupStats) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

func (s groupStats) VisitBound(p iceberg.BoundPredicate) bool {
	f := p.Ref().Field()
	if p.Op() == iceberg.OpIsNan {
		// no row group holds a NaN its file does not count
		n, known := s.nan[f.ID]
		return !known || n > 0
	}
	leaf := TopLeaf(s.meta.Schema, f.ID)
	if leaf < 0 {
		return true // not in the file: NULL or its default, not judged here
	}
	cc, err := s.rg.ColumnChunk(leaf)
	if err != nil {
		return true
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return true
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return true
	}
	if p.Op() == iceberg.OpIsNull {
		return !st.HasNullCount() || st.NullCount() > 0
	}
	switch f.Type.(type) {
	case iceberg.StringType:
		return stringMayMatch(p, s.meta.Schema.Column(leaf), st)
	case iceberg.Float32Type, iceberg.Float64Type:
		return floatMayMatch(p, st)
	}
	vals, ok := literals(p, LiteralInt)
	if !ok {
		return true
	}
	lo, hi, ok := StatsInts(s.meta.Schema.Column(leaf), st, f.Type)
	return !ok || rangeMayMatch(p.Op(), lo, hi, vals)
}

// literals are the constants of p, a comparison with one or an IN list,
// as conv gives them; ok is false for any other predicate, or where conv
// refuses a constant.
func literals[T any](p iceberg.BoundPredicate, conv func(iceberg.Literal) (T, bool)) (vals []T, ok bool) {
	switch q := p.(type) {
	case iceberg.BoundLiteralPredicate:
		v, ok := conv(q.Literal())
		return []T{v}, ok
	case iceberg.BoundSetPredicate:
		if p.Op() != iceberg.OpIn {
			return nil, false
		}
		for _, l := range q.Literals().Members() {
			v, ok := conv(l)
			if !ok {
				return nil, false
			}
			vals = append(vals, v)
		}
		return vals, true
	}
	return nil, false
}

// rangeMayMatch reports whether a value between lo and hi may pass op
// (=, IN, <, <=, >, >=) with the constants vals; true for any other op.
func rangeMayMatch[T cmp.Ordered](op iceberg.Operation, lo, hi T, vals []T) bool {
	switch op {
	case iceberg.OpEQ, iceberg.OpIn:
		for _, v := range vals {
			if lo <= v && v <= hi {
				return true
			}
		}
		return false
	case iceberg.OpLT:
		return lo < vals[0]
	case iceberg.OpLTEQ:
		return lo <= vals[0]
	case iceberg.OpGT:
		return hi > vals[0]
	case iceberg.OpGTEQ:
		return hi >= vals[0]
	}
	return true
}

// stringMayMatch reports whether a value within a string chunk's
// statistics st may pass p (=, IN, <, <=, >, >= or STARTS WITH string
// literals; anything else may). The bounds are compared as Go strings
// compare, by unsigned bytes, which is the order Parquet's min_value and
// max_value of a UTF-8 column are written in (only such statistics are
// used: arrow-go's StatsSet turns down those of writers that ordered
// them otherwise).
//
// A writer may truncate the bounds of long strings; the format requires
// a truncated maximum to stay at or above every value (and a truncated
// minimum is a prefix of the smallest, so below it), so pruning by them
// is sound. arrow-go leaves the empty string out of the minimum, so a
// predicate the empty string satisfies is never judged by it (ReadFilter
// drops such leaves too: EmptyStringSafe).
func stringMayMatch(p iceberg.BoundPredicate, leaf *schema.Column, st metadata.TypedStatistics) bool {
	bs, ok := st.(*metadata.ByteArrayStatistics)
	if !ok || !st.HasMinMax() || leaf.PhysicalType() != parquet.Types.ByteArray || leaf.SortOrder() != schema.SortUNSIGNED {
		return true
	}
	lo, hi := string(bs.Min()), string(bs.Max())
	lits, ok := literals(p, func(l iceberg.Literal) (string, bool) { v, ok := l.Any().(string); return v, ok })
	if !ok {
		return true
	}
	if test, exact := stringPredicate(p); !exact || test("") {
		return true
	}
	if p.Op() == iceberg.OpStartsWith {
		// the strings with the prefix are at or above it, and below the
		// least string above it without it
		pre := lits[0]
		return hi >= pre && (lo <= pre || strings.HasPrefix(lo, pre))
	}
	return rangeMayMatch(p.Op(), lo, hi, lits)
}

// floatMayMatch reports whether a value within a float chunk's
// statistics st may pass p (=, IN, <, <=, >, >=; anything else may).
// Statistics leave NaN out, and no NaN passes these comparisons (a > or
// >= comes with "OR x IS NaN", judged by the file's count); statistics
// holding a NaN (some writers') are not used. -0 and 0 compare equal, in
// SQL as in Go.
func floatMayMatch(p iceberg.BoundPredicate, st metadata.TypedStatistics) bool {
	lo, hi, ok := statsFloats(st)
	if !ok {
		return true
	}
	vals, ok := literals(p, func(l iceberg.Literal) (float64, bool) {
		switch v := l.Any().(type) {
		case float32:
			return float64(v), !math.IsNaN(float64(v))
		case float64:
			return v, !math.IsNaN(v)
		}
		return 0, false
	})
	return !ok || rangeMayMatch(p.Op(), lo, hi, vals)
}

// LiteralInt is the integer behind an INT, BIGINT, DATE or TIMESTAMP
// literal (a bound literal of such a field), as an int64.
func LiteralInt(l iceberg.Literal) (int64, bool) {
	switch v := l.(type) {
	case iceberg.Int32Literal:
		return int64(v), true
	case iceberg.Int64Literal:
		return int64(v), true
	case iceberg.DateLiteral:
		return int64(v), true
	case iceberg.TimestampLiteral:
		return int64(v), true
	}
	return 0, false
}

// StatsInts is the minimum and maximum of a chunk's statistics st of leaf
// (a column of Iceberg type typ) as int64s, where they are the field's
// values: an INT or BIGINT (or an INT promoted to BIGINT), a DATE, or a
// microsecond TIMESTAMP, signed; ok is false otherwise.
func StatsInts(leaf *schema.Column, st metadata.TypedStatistics, typ iceberg.Type) (lo, hi int64, ok bool) {
	if !st.HasMinMax() || leaf.SortOrder() != schema.SortSIGNED {
		return 0, 0, false
	}
	lt := leaf.LogicalType()
	plainInt := func(bits int) bool {
		switch t := lt.(type) {
		case nil, schema.NoLogicalType:
			return true
		case schema.IntLogicalType:
			return t.IsSigned() && t.BitWidth() == int8(bits)
		}
		return false
	}
	switch typ.(type) {
	case iceberg.Int32Type:
		ok = leaf.PhysicalType() == parquet.Types.Int32 && plainInt(32)
	case iceberg.Int64Type:
		ok = leaf.PhysicalType() == parquet.Types.Int64 && plainInt(64) || leaf.PhysicalType() == parquet.Types.Int32 && plainInt(32)
	case iceberg.DateType:
		_, ok = lt.(schema.DateLogicalType)
		ok = ok && leaf.PhysicalType() == parquet.Types.Int32
	case iceberg.TimestampType, iceberg.TimestampTzType:
		t, isTS := lt.(schema.TimestampLogicalType)
		ok = isTS && leaf.PhysicalType() == parquet.Types.Int64 && t.TimeUnit() == schema.TimeUnitMicros
	}
	if !ok {
		return 0, 0, false
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		return int64(s.Min()), int64(s.Max()), true
	case *metadata.Int64Statistics:
		return s.Min(), s.Max(), true
	}
	return 0, 0, false
}

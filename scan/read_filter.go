package scan

import (
	"slices"

	"github.com/apache/iceberg-go"
)

// ReadFilter turns a scan's pruning filter into the one handed to
// iceberg-go's reader, which uses it twice more after file planning: to
// skip row groups by their Parquet statistics, and to drop rows with
// arrow compute kernels. Neither use is safe with every filter:
//
//   - iceberg-go takes a row group's Parquet value count, which counts
//     non-null values only, for Iceberg's value count, which counts NULLs
//     too. A row group with as many NULLs as values then looks all-NULL,
//     and a predicate that no NULL satisfies (k = 5, k IS NOT NULL)
//     skips it, losing its matching rows. So every leaf predicate on a
//     column c that is not c IS NULL becomes (leaf OR c IS NULL): a row
//     group with a NULL is kept, one without is judged by its min/max as
//     before (null counts themselves are right). c IS NOT NULL prunes
//     nothing and is dropped.
//   - arrow-go's kernels cannot evaluate some comparisons iceberg-go
//     builds (a decimal column's; they panicked), so leaves on columns of
//     types outside safeFilterType are dropped.
//
// The result is implied by the filter (it keeps a superset of its rows),
// and the planner evaluates the query's own predicate above the scan, so
// it changes what is read, never the answer. File planning keeps the
// filter as it is: manifest statistics count NULLs correctly.
// schema gives the columns' types; a leaf on a column it lacks is
// dropped. It returns nil when nothing of the filter is left.
func ReadFilter(filter iceberg.BooleanExpression, schema *iceberg.Schema) iceberg.BooleanExpression {
	return safeForm(filter, schema, readLeaf)
}

// safeForm is filter made safe for the empty string and NaN
// (EmptyStringSafe), each leaf then replaced by leaf's form of it; nil
// when nothing is left.
func safeForm(filter iceberg.BooleanExpression, schema *iceberg.Schema, leaf func(iceberg.UnboundPredicate, *iceberg.Schema) iceberg.BooleanExpression) iceberg.BooleanExpression {
	if filter == nil || schema == nil {
		return nil
	}
	if filter = EmptyStringSafe(filter, schema); filter == nil {
		return nil
	}
	return Weaken(filter, func(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
		return leaf(p, schema)
	}, nil)
}

// ReadFilterTimestamps returns the field ids of the timestamp columns
// that ReadFilter(filter, schema) compares with literals: iceberg-go
// prunes row groups by their statistics, which a file storing such a
// column in another unit than microseconds misleads (ReadTasksFiltered).
func ReadFilterTimestamps(filter iceberg.BooleanExpression, schema *iceberg.Schema) []int {
	rf := ReadFilter(filter, schema)
	if rf == nil {
		return nil
	}
	var ids []int
	Weaken(rf, func(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
		if ref, ok := p.Term().(iceberg.Reference); ok && p.Op() != iceberg.OpIsNull {
			if f, ok := schema.FindFieldByNameCaseInsensitive(string(ref)); ok && !slices.Contains(ids, f.ID) {
				switch f.Type.(type) {
				case iceberg.TimestampType, iceberg.TimestampTzType:
					ids = append(ids, f.ID)
				}
			}
		}
		return p
	}, nil)
	return ids
}

// readLeaf is the safe form of one leaf, nil when there is none.
func readLeaf(p iceberg.UnboundPredicate, schema *iceberg.Schema) iceberg.BooleanExpression {
	ref, ok := p.Term().(iceberg.Reference)
	if !ok {
		return iceberg.AlwaysTrue{}
	}
	f, ok := schema.FindFieldByNameCaseInsensitive(string(ref))
	if !ok || !safeFilterType(f.Type) {
		return iceberg.AlwaysTrue{}
	}
	switch p.Op() {
	case iceberg.OpIsNull:
		return p
	case iceberg.OpEQ, iceberg.OpNEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ,
		iceberg.OpIn, iceberg.OpNotIn:
		return iceberg.NewOr(p, iceberg.IsNull(ref))
	default: // IS NOT NULL, NaN tests: nothing safe to prune by; the
		// reader does not implement STARTS WITH
		return iceberg.AlwaysTrue{}
	}
}

// safeFilterType reports whether iceberg-go's reader evaluates predicates
// on a column of type t correctly. Floating point is left out too:
// Parquet min/max ignore NaN, which PostgreSQL orders above every number.
func safeFilterType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type,
		iceberg.StringType, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
		return true
	}
	return false
}

package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
)

// dictGroupColumn is the Iceberg name of the column an aggregate may take
// as dictionary arrays from its scan (exec.TableScan.SetDictionary), or
// "": the aggregate groups a Scan, directly or through Filters, by one
// string column, which nothing else reads (an aggregate's argument,
// FILTER or ORDER BY, or a Filter's predicate would get the dictionary
// array; a Filter passes it on, gathered by its indices), and the scan
// filters no rows itself (ExactPushed). exec.HashAggregate then maps each
// dictionary entry to its group once instead of encoding every row's
// string.
func dictGroupColumn(n *Aggregate) string {
	if len(n.GroupBy) != 1 {
		return ""
	}
	key, ok := n.GroupBy[0].(*ColRef)
	if !ok || key.Typ == nil || key.Typ.ID() != arrow.STRING && key.Typ.ID() != arrow.BINARY {
		return ""
	}
	return dictScanField(n, key, func(*AggCall) bool { return false })
}

// dictDistinctColumn is the Iceberg name, and the input column, of a
// string column that an aggregate may take as dictionary arrays for
// count(DISTINCT col) (exec.HashAggregate.SetDictDistinct), or "": the
// aggregate has no GROUP BY, reads a Scan directly or through Filters,
// and nothing else reads the column (another aggregate, a FILTER, a
// Filter's predicate), and the scan filters no rows itself (ExactPushed).
// Each dictionary entry is then found in the DISTINCT table once a batch
// instead of each row's string.
func dictDistinctColumn(n *Aggregate) (string, ColumnID) {
	if len(n.GroupBy) != 0 {
		return "", 0
	}
	// distinctOf is the column of count(DISTINCT col) of a text column,
	// without FILTER; nil for any other aggregate
	distinctOf := func(a *AggCall) *ColRef {
		if a.Name != "count" || !a.Distinct || len(a.Args) != 1 || a.Filter != nil || len(a.OrderBy) > 0 {
			return nil
		}
		c, ok := a.Args[0].(*ColRef)
		if !ok || c.Typ == nil || c.Typ.ID() != arrow.STRING {
			return nil
		}
		return c
	}
	var key *ColRef
	for _, a := range n.Aggs {
		if key = distinctOf(a); key != nil {
			break
		}
	}
	if key == nil {
		return "", 0
	}
	col := dictScanField(n, key, func(a *AggCall) bool {
		c := distinctOf(a)
		return c != nil && c.ID == key.ID
	})
	if col == "" {
		return "", 0
	}
	return col, key.ID
}

// dictScanField is the Iceberg name of column key of the Scan under n
// (directly or through Filters), or "" where it may not come as
// dictionary arrays: the scan filters rows itself (ExactPushed), or a
// Filter's predicate or an aggregate that skip does not pass reads it (its
// arguments, FILTER or ORDER BY).
func dictScanField(n *Aggregate, key *ColRef, skip func(*AggCall) bool) string {
	used := map[ColumnID]bool{}
	for _, a := range n.Aggs {
		if skip(a) {
			continue
		}
		for _, e := range a.Args {
			exprCols(e, used)
		}
		if a.Filter != nil {
			exprCols(a.Filter, used)
		}
		for _, k := range a.OrderBy {
			exprCols(k.Expr, used)
		}
	}
	in := n.Input
	for {
		f, ok := in.(*Filter)
		if !ok {
			break
		}
		exprCols(f.Pred, used)
		in = f.Input
	}
	sc, ok := in.(*Scan)
	if !ok || sc.ExactPushed != nil || used[key.ID] {
		return ""
	}
	for i, a := range sc.All {
		if a.ID == key.ID {
			return sc.Fields[i]
		}
	}
	return ""
}

// askDictionary asks the table scans at the bottom of op (itself, under
// Filters, or the inputs of an Exchange of parallel chains of them) for
// columns cols as dictionary arrays.
func askDictionary(op exec.Operator, cols ...string) {
	switch x := op.(type) {
	case *exec.TableScan:
		x.SetDictionary(cols)
	case *exec.Exchange, *exec.Filter:
		for _, c := range x.Children() {
			askDictionary(c, cols...)
		}
	}
}

// codedGroupKeys are the group keys (their indices, and their columns'
// Iceberg names) of an aggregate of two or more keys that it may take as
// dictionary arrays and group by codes (exec.HashAggregate.SetCodedKeys):
// string columns of a Scan read directly or through Filters, which
// nothing else reads (another key, an aggregate, a Filter's predicate),
// each named once, where the scan filters no rows itself.
func codedGroupKeys(n *Aggregate) (keys []int, cols []string) {
	if len(n.GroupBy) < 2 {
		return nil, nil
	}
	for i, g := range n.GroupBy {
		key, ok := g.(*ColRef)
		if !ok || key.Typ == nil || key.Typ.ID() != arrow.STRING {
			continue
		}
		others := map[ColumnID]bool{}
		for j, o := range n.GroupBy {
			if j != i {
				exprCols(o, others)
			}
		}
		if others[key.ID] {
			continue
		}
		if col := dictScanField(n, key, func(*AggCall) bool { return false }); col != "" {
			keys, cols = append(keys, i), append(cols, col)
		}
	}
	return keys, cols
}

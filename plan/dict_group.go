package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
)

// dictGroupColumn is the Iceberg name of the column an aggregate may take
// as dictionary arrays from its scan (exec.TableScan.SetDictionary), or
// "": the aggregate groups a Scan directly by one string column, which
// nothing else in it reads (an aggregate's argument, FILTER or ORDER BY
// would get the dictionary array), and the scan filters no rows itself
// (ExactPushed). exec.HashAggregate then maps each dictionary entry to its
// group once instead of encoding every row's string.
func dictGroupColumn(n *Aggregate) string {
	sc, ok := n.Input.(*Scan)
	if !ok || len(n.GroupBy) != 1 || sc.ExactPushed != nil {
		return ""
	}
	key, ok := n.GroupBy[0].(*ColRef)
	if !ok || key.Typ == nil || key.Typ.ID() != arrow.STRING && key.Typ.ID() != arrow.BINARY {
		return ""
	}
	used := map[ColumnID]bool{}
	for _, a := range n.Aggs {
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
	if used[key.ID] {
		return ""
	}
	for i, a := range sc.All {
		if a.ID == key.ID {
			return sc.Fields[i]
		}
	}
	return ""
}

// askDictionary asks the table scans at the top of op (itself, or the
// inputs of an Exchange of parallel scans) for column col as dictionary
// arrays.
func askDictionary(op exec.Operator, col string) {
	switch x := op.(type) {
	case *exec.TableScan:
		x.SetDictionary([]string{col})
	case *exec.Exchange:
		for _, c := range x.Children() {
			askDictionary(c, col)
		}
	}
}

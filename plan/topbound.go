package plan

import (
	"github.com/skadedb/skade/exec"
)

// topScans are the table scans whose column feeds column k of op through
// Projects (the column passed on bare), Filters and the inputs of an
// Exchange, with that column's index in each; ok is false where column k
// comes from anything else.
func topScans(op exec.Operator, k int) (scans []*exec.TableScan, cols []int, ok bool) {
	switch x := op.(type) {
	case *exec.TableScan:
		return []*exec.TableScan{x}, []int{k}, true
	case *exec.Project:
		if k < 0 || k >= len(x.Exprs()) {
			return nil, nil, false
		}
		c, isCol := x.Exprs()[k].(*exec.Column)
		if !isCol {
			return nil, nil, false
		}
		return topScans(x.Children()[0], c.Index)
	case *exec.Filter:
		return topScans(x.Children()[0], k)
	case *exec.Exchange:
		for _, in := range x.Children() {
			s, c, ok := topScans(in, k)
			if !ok {
				return nil, nil, false
			}
			scans, cols = append(scans, s...), append(cols, c...)
		}
		return scans, cols, len(scans) > 0
	}
	return nil, nil, false
}

// setTopBound lets a top-N (sort, an ORDER BY … LIMIT) whose first key is
// a column of integer-like type read straight from table scans tell them
// the worst value it holds, for them to read their files best bounds
// first and leave out the files that cannot beat it (scan.TopBound).
func setTopBound(sort *exec.Sort, in exec.Operator, first exec.Expr) {
	key, ok := first.(*exec.Column)
	if !ok {
		return
	}
	scans, cols, ok := topScans(in, key.Index)
	if !ok {
		return
	}
	tb, ok := scans[0].TopBoundColumn(cols[0])
	if !ok {
		return
	}
	for i, s := range scans[1:] {
		other, ok := s.TopBoundColumn(cols[i+1])
		if !ok || other.FieldID != tb.FieldID || other.Wide != tb.Wide || other.Float != tb.Float {
			return
		}
	}
	if !sort.SetTopBound(tb) {
		return
	}
	for _, s := range scans {
		s.SetTopBound(tb)
	}
}

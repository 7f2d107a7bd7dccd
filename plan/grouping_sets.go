package plan

import (
	"strconv"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// GROUP BY GROUPING SETS (…), ROLLUP (…) and CUBE (…): the query is the
// UNION ALL of one aggregation per grouping set, in which the grouping
// expressions outside the set are NULL (outside aggregate arguments, as
// in PostgreSQL) and grouping(…) is the bit mask of those left out. The
// input is read once per set.

// maxGroupingSets bounds the branches a GROUP BY may expand to.
const maxGroupingSets = 4096

// groupingBranch is one grouping set's branch.
type groupingBranch struct {
	nulled map[string]bool // grouping expressions not grouped here, by SQL text
	all    []string        // every grouping expression, in order
}

func hasGroupingSets(sel *parser.Select) bool {
	for _, g := range sel.GroupBy {
		if _, ok := g.(*parser.GroupingSets); ok {
			return true
		}
	}
	return false
}

// groupingSets expands GROUP BY's items into their grouping sets: the
// product of each item's alternatives.
func groupingSets(sel *parser.Select) ([][]parser.Expr, error) {
	sets := [][]parser.Expr{{}}
	for _, g := range sel.GroupBy {
		alts := [][]parser.Expr{{g}}
		if gs, ok := g.(*parser.GroupingSets); ok {
			alts = nil
			for _, set := range gs.Sets {
				for _, x := range set {
					if _, nested := x.(*parser.GroupingSets); nested {
						return nil, errorf(x.Position(), "nested GROUPING SETS, ROLLUP or CUBE are not supported yet")
					}
				}
			}
			switch gs.Kind {
			case "GROUPING SETS":
				alts = gs.Sets
			case "ROLLUP":
				for i := len(gs.Sets); i >= 0; i-- {
					var set []parser.Expr
					for _, el := range gs.Sets[:i] {
						set = append(set, el...)
					}
					alts = append(alts, set)
				}
			case "CUBE":
				if len(gs.Sets) > 12 {
					return nil, errorf(gs.Pos, "CUBE of %d elements is too large; at most 12", len(gs.Sets))
				}
				for mask := 1<<len(gs.Sets) - 1; mask >= 0; mask-- {
					var set []parser.Expr
					for i, el := range gs.Sets {
						if mask&(1<<(len(gs.Sets)-1-i)) != 0 {
							set = append(set, el...)
						}
					}
					alts = append(alts, set)
				}
			}
		}
		var next [][]parser.Expr
		for _, s := range sets {
			for _, a := range alts {
				next = append(next, append(append([]parser.Expr(nil), s...), a...))
			}
		}
		if len(next) > maxGroupingSets {
			return nil, errorf(g.Position(), "GROUP BY expands to more than %d grouping sets", maxGroupingSets)
		}
		sets = next
	}
	return sets, nil
}

func (b *binder) bindGroupingSets(sel *parser.Select, orderBy []*parser.OrderItem, outer *scope) (Node, error) {
	if sel.GroupByAll {
		return nil, errorf(sel.Pos, "GROUP BY ALL cannot be combined with GROUPING SETS, ROLLUP or CUBE")
	}
	sets, err := groupingSets(sel)
	if err != nil {
		return nil, err
	}
	// a grouping expression is known by the select item it names (an
	// alias or an ordinal) or by its own text
	key := func(e parser.Expr) string {
		if lit, ok := e.(*parser.Literal); ok && lit.Kind == parser.LitInteger {
			if i, err := strconv.Atoi(lit.Value); err == nil && i >= 1 && i <= len(sel.Items) {
				return sel.Items[i-1].Expr.String()
			}
		}
		if c, ok := e.(*parser.ColumnRef); ok && len(c.Name) == 1 {
			for _, it := range sel.Items {
				if !it.Alias.Empty() && identName(it.Alias) == identName(c.Name[0]) {
					return it.Expr.String()
				}
			}
		}
		return e.String()
	}
	var all []string
	seen := map[string]bool{}
	for _, set := range sets {
		for _, e := range set {
			if k := key(e); !seen[k] {
				seen[k] = true
				all = append(all, k)
			}
		}
	}
	if b.groupingBranches == nil {
		b.groupingBranches = map[*parser.Select]*groupingBranch{}
	}
	var node Node
	for _, set := range sets {
		in := map[string]bool{}
		for _, e := range set {
			in[key(e)] = true
		}
		br := &groupingBranch{nulled: map[string]bool{}, all: all}
		for _, k := range all {
			if !in[k] {
				br.nulled[k] = true
			}
		}
		s := *sel
		s.GroupBy = set
		b.groupingBranches[&s] = br
		n, err := b.bindSelect(&s, nil, outer)
		delete(b.groupingBranches, &s)
		if err != nil {
			return nil, err
		}
		if node == nil {
			node = n
			continue
		}
		if node, err = b.setOpNode("UNION", true, node, n, sel.Pos); err != nil {
			return nil, err
		}
	}
	if len(orderBy) > 0 {
		return b.orderOutputs(node, orderBy, outer)
	}
	return node, nil
}

// bindGrouping is grouping(e, …): a bit per argument, most significant
// first, set when the row's grouping set leaves that expression out.
func (b *binder) bindGrouping(e *parser.FuncCall, ec *exprCtx) (Expr, error) {
	if ec.agg == nil {
		return nil, errorf(e.Pos, "grouping() is only allowed in a query with GROUP BY, in its select list, HAVING or ORDER BY")
	}
	if len(e.Args) == 0 || len(e.Args) > 31 {
		return nil, errorf(e.Pos, "grouping() takes 1 to 31 grouping expressions")
	}
	var v int32
	for _, a := range e.Args {
		k := a.String()
		v <<= 1
		switch {
		case ec.agg.sets != nil && ec.agg.sets.nulled[k]:
			v |= 1
		case ec.agg.groups[k] != nil:
		default:
			return nil, errorf(a.Position(), "arguments to GROUPING must be grouping expressions of the associated query level")
		}
	}
	lit, _ := exec.NewLiteral(v)
	return constLit(lit), nil
}

package plan

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// InitPlan is an uncorrelated subquery used as a value: a scalar subquery
// or EXISTS whose result does not depend on the outer row, so it is run
// once, before the statement, as Postgres's init plans are. The binder
// only records it (the expression renders as $initN in EXPLAIN); the
// optimizer rule foldInits runs it and replaces it with its value before
// pushdown, so that the constant still prunes files. EXPLAIN without
// ANALYZE does not run it, and shows its plan under "InitPlan N".
type InitPlan struct {
	N      int  // 1-based, in binding order
	Sub    Node // the subquery (one column for a scalar subquery)
	Exists bool
	Typ    arrow.DataType
	Pos    parser.Pos

	b     *binder
	mu    sync.Mutex
	value *Const // set once run
}

func (ip *InitPlan) Type() arrow.DataType { return ip.Typ }
func (ip *InitPlan) String() string       { return fmt.Sprintf("$init%d", ip.N) }

// newInitPlan records an init plan.
func (b *binder) newInitPlan(sub Node, exists bool, typ arrow.DataType, pos parser.Pos) *InitPlan {
	ip := &InitPlan{N: len(b.inits) + 1, Sub: sub, Exists: exists, Typ: typ, Pos: pos, b: b}
	b.inits = append(b.inits, ip)
	return ip
}

// eval runs the init plan once and returns its value.
func (ip *InitPlan) eval() (*Const, error) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.value != nil {
		return ip.value, nil
	}
	if ip.Exists {
		rows, err := ip.b.runInit(ip.Sub, 1)
		if err != nil {
			return nil, err
		}
		l, _ := exec.NewLiteral(len(rows) > 0)
		ip.value = &Const{Lit: l}
		return ip.value, nil
	}
	rows, err := ip.b.runInit(ip.Sub, 2)
	if err != nil {
		return nil, err
	}
	if len(rows) > 1 {
		return nil, errorf(ip.Pos, "more than one row returned by a subquery used as an expression")
	}
	if len(rows) == 0 || !rows[0].IsValid() {
		ip.value = &Const{Lit: exec.NewNullLiteral(ip.Typ)}
	} else {
		ip.value = &Const{Lit: &exec.Literal{Value: rows[0]}}
	}
	return ip.value, nil
}

// foldExpr replaces the init plans in e by their values, running them,
// and folds the calls that become constant.
func (b *binder) foldExpr(e Expr) (Expr, error) {
	switch x := e.(type) {
	case *InitPlan:
		return x.eval()
	case *Func:
		args := make([]Expr, len(x.Args))
		changed := false
		for i, a := range x.Args {
			r, err := b.foldExpr(a)
			if err != nil {
				return nil, err
			}
			args[i] = r
			changed = changed || r != a
		}
		if !changed {
			return x, nil
		}
		if x.Volatile {
			return &Func{Name: x.Name, Args: args, Typ: x.Typ, Volatile: true, build: x.build}, nil
		}
		return b.newFunc(x.Name, args, x.build)
	}
	return e, nil
}

// hasInits reports whether the binder recorded an init plan not yet run.
func (b *binder) hasInits() bool {
	for _, ip := range b.inits {
		if ip.value == nil {
			return true
		}
	}
	return false
}

// foldInits is the optimizer rule that runs every init plan of n and puts
// its value in its place. It runs before pushdown.
func (b *binder) foldInits(n Node) error {
	if !b.hasInits() {
		return nil
	}
	return mapNodeExprs(n, b.foldExpr)
}

// mapNodeExprs replaces, in place, every expression of n and the nodes
// under it by f's result.
func mapNodeExprs(n Node, f func(Expr) (Expr, error)) error {
	one := func(e *Expr) error {
		if *e == nil {
			return nil
		}
		r, err := f(*e)
		if err != nil {
			return err
		}
		*e = r
		return nil
	}
	many := func(es []Expr) error {
		for i := range es {
			if err := one(&es[i]); err != nil {
				return err
			}
		}
		return nil
	}
	keys := func(ks []SortKey) error {
		for i := range ks {
			if err := one(&ks[i].Expr); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	switch x := n.(type) {
	case *Scan:
		err = many(x.Filters)
	case *Unnest:
		err = many(x.Args)
	case *Values:
		for _, r := range x.Rows {
			if err = many(r); err != nil {
				break
			}
		}
	case *Filter:
		err = one(&x.Pred)
	case *Project:
		err = many(x.Exprs)
	case *Join:
		if err = one(&x.On); err == nil {
			err = one(&x.Residual)
		}
	case *Aggregate:
		err = many(x.GroupBy)
		for _, a := range x.Aggs {
			if err != nil {
				break
			}
			if err = many(a.Args); err == nil {
				if err = one(&a.Filter); err == nil {
					err = keys(a.OrderBy)
				}
			}
		}
	case *Window:
		for _, w := range x.Funcs {
			if err = many(w.Args); err != nil {
				break
			}
			if err = many(w.PartitionBy); err != nil {
				break
			}
			if err = keys(w.OrderBy); err != nil {
				break
			}
		}
	case *Sort:
		err = keys(x.Keys)
	case *MetadataAnswer:
		err = many(x.Row)
	}
	if err != nil {
		return err
	}
	for _, c := range n.Children() {
		if err := mapNodeExprs(c, f); err != nil {
			return err
		}
	}
	return nil
}

// initPlanExpr evaluates an init plan at run time, on first use: what an
// init plan compiles to when the rule did not fold it (a plan built for
// EXPLAIN, which never runs it).
type initPlanExpr struct{ ip *InitPlan }

func (e *initPlanExpr) DataType() arrow.DataType { return e.ip.Typ }
func (e *initPlanExpr) String() string           { return e.ip.String() }
func (e *initPlanExpr) Eval(ec *exec.EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	c, err := e.ip.eval()
	if err != nil {
		return nil, err
	}
	return scalar.MakeArrayFromScalar(c.Lit.Value, int(batch.NumRows()), ec.Mem)
}

// writeInits renders the binder's init plans for EXPLAIN: their plans when
// not run, their values when run (EXPLAIN ANALYZE ran them first).
func writeInits(sb *strings.Builder, b *binder, indent string) {
	defer writeSubplans(sb, b, indent)
	for _, ip := range b.inits {
		what := "scalar subquery"
		if ip.Exists {
			what = "EXISTS"
		}
		if ip.value != nil {
			fmt.Fprintf(sb, "%s%s (%s, ran first) = %s\n", indent, ip, what, ip.value)
			continue
		}
		fmt.Fprintf(sb, "%s%s (%s, runs once before the statement):\n", indent, ip, what)
		for _, l := range strings.Split(strings.TrimRight(explainLogical(optimize(b, ip.Sub)), "\n"), "\n") {
			sb.WriteString(indent + "  " + l + "\n")
		}
	}
}

package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Conditional expressions: CASE, COALESCE, NULLIF, GREATEST, LEAST, IN
// and BETWEEN.
//
// CASE and COALESCE are lazy, as in Postgres: a branch is evaluated only
// on the rows that reach it, so CASE WHEN x = 0 THEN 0 ELSE 1/x END never
// divides by zero. They gather the reaching rows into a smaller batch,
// evaluate the branch on it, and scatter the results back by row number.

// When is one WHEN cond THEN value arm of a CASE.
type When struct {
	Cond, Then Expr
}

// Case is a searched CASE expression. Else may be nil (NULL).
type Case struct {
	Whens []When
	Else  Expr
	typ   arrow.DataType
}

var _ Expr = (*Case)(nil)

// NewCase builds a searched CASE. The THEN and ELSE values are coerced to
// their common type; each condition must be boolean. (A simple CASE x WHEN
// v ... is the binder's rewrite into x = v conditions.)
func NewCase(whens []When, elseExpr Expr) (Expr, error) {
	if len(whens) == 0 {
		return nil, fmt.Errorf("exec: CASE needs at least one WHEN (planner bug)")
	}
	results := make([]Expr, 0, len(whens)+1)
	for _, w := range whens {
		results = append(results, w.Then)
	}
	if elseExpr != nil {
		results = append(results, elseExpr)
	}
	t, err := commonTypeOf("CASE", results)
	if err != nil {
		return nil, err
	}
	c := &Case{typ: t}
	for _, w := range whens {
		cond, err := boolArg(w.Cond)
		if err != nil {
			return nil, fmt.Errorf("argument of CASE/WHEN must be type boolean, not type %s", TypeName(w.Cond.DataType()))
		}
		then, err := Coerce(w.Then, t)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Then: then})
	}
	if elseExpr != nil {
		if c.Else, err = Coerce(elseExpr, t); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Wrapper is an expression that evaluates one argument and passes or
// refuses its value (a NOT NULL check of an assignment): it reads what
// its argument reads.
type Wrapper interface {
	Expr
	Unwrap() Expr
}

// UsedColumns lists the input columns the expressions read (unordered),
// or nil when an expression of a kind this file does not know hides its
// inputs: a caller must then assume every column is read.
func UsedColumns(es ...Expr) []int {
	cols, _ := usedColumns(es...)
	return cols
}

// usedColumns is UsedColumns, and whether an expression calls a volatile
// function (random(), whose value each evaluation changes).
func usedColumns(es ...Expr) (_ []int, volatile bool) {
	seen := map[int]bool{}
	var walk func(e Expr) bool
	walk = func(e Expr) bool {
		switch x := e.(type) {
		case nil, *Literal:
			return true
		case *Column:
			seen[x.Index] = true
			return true
		case *Cast:
			return walk(x.Arg)
		case *Call:
			volatile = volatile || volatileFuncs[x.Name]
			for _, a := range x.Args {
				if !walk(a) {
					return false
				}
			}
			return true
		case *Case:
			for _, w := range x.Whens {
				if !walk(w.Cond) || !walk(w.Then) {
					return false
				}
			}
			return walk(x.Else)
		case *Coalesce:
			for _, a := range x.Args {
				if !walk(a) {
					return false
				}
			}
			return true
		case *inList:
			for _, a := range x.list {
				if !walk(a) {
					return false
				}
			}
			return walk(x.arg)
		case Wrapper:
			return walk(x.Unwrap())
		}
		return false
	}
	for _, e := range es {
		if !walk(e) {
			return nil, volatile
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	if len(out) == 0 {
		out = []int{} // reads no column: still known
	}
	return out, volatile
}

func (c *Case) DataType() arrow.DataType { return c.typ }

func (c *Case) String() string {
	var sb strings.Builder
	sb.WriteString("CASE")
	for _, w := range c.Whens {
		fmt.Fprintf(&sb, " WHEN %s THEN %s", w.Cond, w.Then)
	}
	if c.Else != nil {
		fmt.Fprintf(&sb, " ELSE %s", c.Else)
	}
	sb.WriteString(" END")
	return sb.String()
}

func (c *Case) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	// the columns are found per batch, not at construction, because the
	// optimizer may renumber columns inside a built tree
	parts := []Expr{c.Else}
	for _, w := range c.Whens {
		parts = append(parts, w.Cond, w.Then)
	}
	if !slices.ContainsFunc(parts, canFail) {
		return c.evalEager(ec, batch)
	}
	return c.evalLazy(ec, batch, UsedColumns(parts...))
}

// evalLazy evaluates each arm only on the rows that reach it.
func (c *Case) evalLazy(ec *EvalContext, batch arrow.RecordBatch, used []int) (arrow.Array, error) {
	p := newPiecewise(ec, batch, c.typ, used)
	defer p.release()
	for _, w := range c.Whens {
		if p.remaining.NumRows() == 0 {
			break
		}
		cond, err := w.Cond.Eval(ec, p.remaining)
		if err != nil {
			return nil, err
		}
		sel, rest := splitTrue(cond)
		cond.Release()
		if err := p.branch(w.Then, sel, rest); err != nil {
			return nil, err
		}
	}
	if err := p.finish(c.Else); err != nil {
		return nil, err
	}
	return p.assemble()
}

// evalEager evaluates every arm on the whole batch and picks per row:
// cheaper than gathering rows, and equivalent when no arm can fail.
func (c *Case) evalEager(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumRows())
	choice := make([]int32, n) // arm per row; len(c.Whens) = ELSE
	for i := range choice {
		choice[i] = -1
	}
	var results []arrow.Array
	defer func() { releaseAll(results) }()
	undecided := n
	for k, w := range c.Whens {
		if undecided == 0 {
			break
		}
		cond, err := w.Cond.Eval(ec, batch)
		if err != nil {
			return nil, err
		}
		r := newBitReader(cond)
		hit := false
		for i := range n {
			if choice[i] < 0 {
				if v, ok := r.get(i); ok && v {
					choice[i] = int32(k)
					undecided--
					hit = true
				}
			}
		}
		cond.Release()
		var v arrow.Array
		if hit {
			if v, err = w.Then.Eval(ec, batch); err != nil {
				return nil, err
			}
		} else {
			v = nullArray(ec.Mem, c.typ, 0)
		}
		results = append(results, v)
	}
	for len(results) < len(c.Whens) {
		results = append(results, nullArray(ec.Mem, c.typ, 0))
	}
	if undecided > 0 {
		var v arrow.Array
		if c.Else == nil {
			v = nullArray(ec.Mem, c.typ, n)
		} else {
			var err error
			if v, err = c.Else.Eval(ec, batch); err != nil {
				return nil, err
			}
		}
		results = append(results, v)
	}
	// gather from the concatenated arm results
	offsets := make([]int32, len(results))
	off := int32(0)
	for k, r := range results {
		offsets[k] = off
		off += int32(r.Len())
	}
	perm := make([]int32, n)
	for i, k := range choice {
		if k < 0 {
			k = int32(len(c.Whens))
		}
		perm[i] = offsets[k] + int32(i)
	}
	all, err := array.Concatenate(results, ec.Mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	return takeArray(ec.Mem, all, perm)
}

// splitTrue lists the rows where a boolean array is TRUE, and the rest
// (FALSE or NULL).
func splitTrue(a arrow.Array) (sel, rest []int32) {
	r := newBitReader(a)
	n := a.Len()
	for i := range n {
		if v, ok := r.get(i); ok && v {
			sel = append(sel, int32(i))
		} else {
			rest = append(rest, int32(i))
		}
	}
	return sel, rest
}

// piecewise evaluates expressions on shrinking subsets of a batch and
// scatters the partial results back into one array.
type piecewise struct {
	ec        *EvalContext
	n         int
	typ       arrow.DataType
	remaining arrow.RecordBatch
	remIdx    []int32 // original row of each remaining row; nil = identity
	pieces    []arrow.Array
	pieceIdx  [][]int32 // original rows of each piece; nil = identity
}

// newPiecewise starts on batch. When used lists the columns the branches
// read, every other column is swapped for a buffer-less NULL column, so
// the gathers that narrow the batch copy only what the branches need.
func newPiecewise(ec *EvalContext, batch arrow.RecordBatch, typ arrow.DataType, used []int) *piecewise {
	n := int(batch.NumRows())
	if used == nil || len(used) == int(batch.NumCols()) {
		batch.Retain()
		return &piecewise{ec: ec, n: n, typ: typ, remaining: batch}
	}
	keep := make([]bool, batch.NumCols())
	for _, i := range used {
		if i >= 0 && i < len(keep) {
			keep[i] = true
		}
	}
	fields := make([]arrow.Field, len(keep))
	cols := make([]arrow.Array, len(keep))
	for i := range keep {
		f := batch.Schema().Field(i)
		if keep[i] {
			cols[i] = batch.Column(i)
			cols[i].Retain()
		} else {
			f.Type = arrow.Null
			cols[i] = array.NewNull(n)
		}
		fields[i] = f
	}
	pruned := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	releaseAll(cols)
	return &piecewise{ec: ec, n: n, typ: typ, remaining: pruned}
}

func (p *piecewise) release() {
	if p.remaining != nil {
		p.remaining.Release()
	}
	releaseAll(p.pieces)
}

func mapIdx(base, sel []int32) []int32 {
	out := make([]int32, len(sel))
	for i, s := range sel {
		if base == nil {
			out[i] = s
		} else {
			out[i] = base[s]
		}
	}
	return out
}

// branch evaluates e on the remaining rows listed in sel; the rows in
// rest stay for later branches.
func (p *piecewise) branch(e Expr, sel, rest []int32) error {
	if len(sel) == 0 {
		return nil
	}
	if len(rest) == 0 {
		v, err := e.Eval(p.ec, p.remaining)
		if err != nil {
			return err
		}
		p.add(v, p.remIdx)
		return p.setRemaining(nil)
	}
	sub, err := takeBatch(p.ec.Mem, p.remaining, sel)
	if err != nil {
		return err
	}
	v, err := e.Eval(p.ec, sub)
	sub.Release()
	if err != nil {
		return err
	}
	p.add(v, mapIdx(p.remIdx, sel))
	return p.setRemaining(rest)
}

func (p *piecewise) add(v arrow.Array, idx []int32) {
	p.pieces = append(p.pieces, v)
	p.pieceIdx = append(p.pieceIdx, idx)
}

// setRemaining keeps only rows keep of the remaining batch.
func (p *piecewise) setRemaining(keep []int32) error {
	next, err := takeBatch(p.ec.Mem, p.remaining, keep)
	if err != nil {
		return err
	}
	p.remIdx = mapIdx(p.remIdx, keep)
	p.remaining.Release()
	p.remaining = next
	return nil
}

// finish evaluates e (nil = NULL) on every row still remaining.
func (p *piecewise) finish(e Expr) error {
	m := int(p.remaining.NumRows())
	if m == 0 {
		return nil
	}
	var v arrow.Array
	if e == nil {
		v = nullArray(p.ec.Mem, p.typ, m)
	} else {
		var err error
		if v, err = e.Eval(p.ec, p.remaining); err != nil {
			return err
		}
	}
	p.add(v, p.remIdx)
	return p.setRemaining(nil)
}

// assemble scatters the pieces back into row order.
func (p *piecewise) assemble() (arrow.Array, error) {
	if len(p.pieces) == 0 {
		return nullArray(p.ec.Mem, p.typ, p.n), nil
	}
	if len(p.pieces) == 1 && p.pieceIdx[0] == nil {
		v := p.pieces[0]
		v.Retain()
		return v, nil
	}
	all, err := array.Concatenate(p.pieces, p.ec.Mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	perm := make([]int32, p.n)
	off := int32(0)
	for k, idx := range p.pieceIdx {
		for j, orig := range idx {
			perm[orig] = off + int32(j)
		}
		off += int32(p.pieces[k].Len())
	}
	return takeArray(p.ec.Mem, all, perm)
}

// ---- COALESCE ---------------------------------------------------------

// Coalesce returns its first non-NULL argument, evaluating each argument
// only on the rows where all earlier ones were NULL.
type Coalesce struct {
	Args []Expr
	typ  arrow.DataType
}

var _ Expr = (*Coalesce)(nil)

// NewCoalesce builds COALESCE(args...).
func NewCoalesce(args ...Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("exec: COALESCE needs an argument (planner bug)")
	}
	t, err := commonTypeOf("COALESCE", args)
	if err != nil {
		return nil, err
	}
	cargs, err := coerceAll(args, t)
	if err != nil {
		return nil, err
	}
	return &Coalesce{Args: cargs, typ: t}, nil
}

func (c *Coalesce) DataType() arrow.DataType { return c.typ }

func (c *Coalesce) String() string { return "coalesce(" + joinExprs(c.Args) + ")" }

func (c *Coalesce) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	p := newPiecewise(ec, batch, c.typ, UsedColumns(c.Args...))
	defer p.release()
	for i, a := range c.Args {
		if p.remaining.NumRows() == 0 {
			break
		}
		v, err := a.Eval(ec, p.remaining)
		if err != nil {
			return nil, err
		}
		if i == len(c.Args)-1 || v.NullN() == 0 {
			p.add(v, p.remIdx)
			if err := p.setRemaining(nil); err != nil {
				return nil, err
			}
			break
		}
		var sel, rest []int32
		for j := range v.Len() {
			if v.IsValid(j) {
				sel = append(sel, int32(j))
			} else {
				rest = append(rest, int32(j))
			}
		}
		if len(sel) > 0 {
			part, err := takeArray(ec.Mem, v, sel)
			if err != nil {
				v.Release()
				return nil, err
			}
			p.add(part, mapIdx(p.remIdx, sel))
			if err := p.setRemaining(rest); err != nil {
				v.Release()
				return nil, err
			}
		}
		v.Release()
	}
	if err := p.finish(nil); err != nil {
		return nil, err
	}
	return p.assemble()
}

func joinExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

// ---- NULLIF, GREATEST, LEAST -------------------------------------------

// NewNullIf builds NULLIF(a, b): NULL where a = b, else a. Its type is
// a's when PostgreSQL has an = operator across a's and b's types (two
// integer types, or two floating-point types), else their common type,
// as PostgreSQL returns the first argument of the = it picks:
// NULLIF(int, bigint) is an int, NULLIF(int, double) a double.
func NewNullIf(a, b Expr) (Expr, error) {
	t, err := commonTypeOf("NULLIF", []Expr{a, b})
	if err != nil {
		return nil, err
	}
	out := t
	at, bt := a.DataType(), b.DataType()
	if (isInteger(at) && isInteger(bt)) || (isFloat(at) && isFloat(bt)) {
		out = at
	}
	ca, err := Coerce(a, t)
	if err != nil {
		return nil, err
	}
	if b, err = Coerce(b, t); err != nil {
		return nil, err
	}
	if out == t {
		a = ca
	}
	eq := compareKernel("=", t)
	if eq == nil {
		return nil, fmt.Errorf("could not identify an equality operator for type %s", TypeName(t))
	}
	return newCall("nullif", out, func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		e, err := eq(ec, args[1:], n)
		if err != nil {
			return nil, err
		}
		defer e.Release()
		idx := make([]int32, n)
		r := newBitReader(e)
		for i := range n {
			idx[i] = int32(i)
			if v, ok := r.get(i); ok && v {
				idx[i] = -1
			}
		}
		return takeArray(ec.Mem, args[0], idx)
	}, formFunc, a, ca, b), nil
}

// NewGreatest builds GREATEST(args...); NULLs are ignored, as in Postgres.
func NewGreatest(args ...Expr) (Expr, error) { return newExtreme("greatest", ">", args) }

// NewLeast builds LEAST(args...); NULLs are ignored, as in Postgres.
func NewLeast(args ...Expr) (Expr, error) { return newExtreme("least", "<", args) }

func newExtreme(name, op string, args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("exec: %s needs an argument (planner bug)", name)
	}
	t, err := commonTypeOf(strings.ToUpper(name), args)
	if err != nil {
		return nil, err
	}
	cargs, err := coerceAll(args, t)
	if err != nil {
		return nil, err
	}
	better := compareKernel(op, t)
	if better == nil {
		return nil, fmt.Errorf("could not identify a comparison function for type %s", TypeName(t))
	}
	return newCall(name, t, func(ec *EvalContext, in []arrow.Array, n int) (arrow.Array, error) {
		cur := in[0]
		cur.Retain()
		for _, next := range in[1:] {
			b, err := better(ec, []arrow.Array{next, cur}, n)
			if err != nil {
				cur.Release()
				return nil, err
			}
			// take next where it is better, or where cur is NULL
			idx := make([]int32, n)
			r := newBitReader(b)
			for i := range n {
				v, ok := r.get(i)
				if (ok && v) || (cur.IsNull(i) && next.IsValid(i)) {
					idx[i] = int32(n + i)
				} else {
					idx[i] = int32(i)
				}
			}
			b.Release()
			both, err := array.Concatenate([]arrow.Array{cur, next}, ec.Mem)
			cur.Release()
			if err != nil {
				return nil, err
			}
			cur, err = takeArray(ec.Mem, both, idx)
			both.Release()
			if err != nil {
				return nil, err
			}
		}
		return cur, nil
	}, formFunc, cargs...), nil
}

func init() {
	register("coalesce", func(_ string, args []Expr) (Expr, error) { return NewCoalesce(args...) })
	register("nullif", func(_ string, args []Expr) (Expr, error) {
		if len(args) != 2 {
			return nil, errNoMatch
		}
		return NewNullIf(args[0], args[1])
	})
	register("greatest", func(_ string, args []Expr) (Expr, error) { return NewGreatest(args...) })
	register("least", func(_ string, args []Expr) (Expr, error) { return NewLeast(args...) })
	// IN and BETWEEN are also reachable by name, for binders that lower
	// every operator to NewCall
	for _, name := range []string{"in", "not_in"} {
		negate := name == "not_in"
		registerOp(name, func(_ string, args []Expr) (Expr, error) {
			if len(args) < 2 {
				return nil, errNoMatch
			}
			return NewInList(args[0], args[1:], negate)
		})
	}
	for _, name := range []string{"between", "not_between"} {
		negate := name == "not_between"
		registerOp(name, func(_ string, args []Expr) (Expr, error) {
			if len(args) != 3 {
				return nil, errNoMatch
			}
			return NewBetween(args[0], args[1], args[2], negate)
		})
	}
}

// ---- IN and BETWEEN ------------------------------------------------------

// NewInList builds arg [NOT] IN (list...). With SQL's NULL rules: x IN
// (1, NULL) is NULL when x is not 1, and NOT IN is its negation.
func NewInList(arg Expr, list []Expr, negate bool) (Expr, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("exec: IN needs a list (planner bug)")
	}
	t, err := commonTypeOf("IN", append([]Expr{arg}, list...))
	if err != nil {
		return nil, err
	}
	if arg, err = Coerce(arg, t); err != nil {
		return nil, err
	}
	clist, err := coerceAll(list, t)
	if err != nil {
		return nil, err
	}
	name := "in"
	if negate {
		name = "not_in"
	}
	if fn := inSetKernel(t, clist, negate); fn != nil {
		return &inList{arg: arg, list: clist, negate: negate, fn: fn, name: name, setOnly: true}, nil
	}
	eq := compareKernel("=", t)
	if eq == nil {
		return nil, fmt.Errorf("could not identify an equality operator for type %s", TypeName(t))
	}
	or := kleene(false)
	if negate {
		name = "not_in"
	}
	return &inList{arg: arg, list: clist, negate: negate, fn: func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		x := args[0]
		var acc arrow.Array
		for _, v := range args[1:] {
			e, err := eq(ec, []arrow.Array{x, v}, n)
			if err != nil {
				return nil, err
			}
			if acc == nil {
				acc = e
				continue
			}
			next, err := or(ec, []arrow.Array{acc, e}, n)
			acc.Release()
			e.Release()
			if err != nil {
				return nil, err
			}
			acc = next
		}
		if !negate {
			return acc, nil
		}
		defer acc.Release()
		return notKernel(ec, []arrow.Array{acc}, n)
	}, name: name}, nil
}

var _ Expr = (*inList)(nil)

// inList is an IN predicate; it is a Call whose String prints SQL.
type inList struct {
	arg    Expr
	list   []Expr
	negate bool
	fn     kernel
	name   string
	// setOnly: the list was all constants, folded into a hash set that fn
	// holds, so only arg is evaluated.
	setOnly bool
}

func (l *inList) DataType() arrow.DataType { return tBool }

func (l *inList) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	c := Call{Name: l.name, Args: append([]Expr{l.arg}, l.list...), typ: tBool, fn: l.fn}
	if l.setOnly {
		c.Args = []Expr{l.arg}
	}
	return c.Eval(ec, batch)
}

// inSetKernel folds a list of literals into a hash set, for integer-like
// and string types; nil when the list is not all literals.
func inSetKernel(t arrow.DataType, list []Expr, negate bool) kernel {
	hasNull := false
	for _, e := range list {
		l, ok := e.(*Literal)
		if !ok {
			return nil
		}
		if !l.Value.IsValid() {
			hasNull = true
		}
	}
	switch t.ID() {
	case arrow.INT8:
		return inSetFixed[int8](list, hasNull, negate)
	case arrow.INT16:
		return inSetFixed[int16](list, hasNull, negate)
	case arrow.INT32:
		return inSetFixed[int32](list, hasNull, negate)
	case arrow.INT64:
		return inSetFixed[int64](list, hasNull, negate)
	case arrow.DATE32:
		return inSetFixed[arrow.Date32](list, hasNull, negate)
	case arrow.TIMESTAMP:
		return inSetFixed[arrow.Timestamp](list, hasNull, negate)
	case arrow.STRING:
		set := map[string]struct{}{}
		for _, e := range list {
			if c := constStr(e); c != nil {
				set[string(c.data)] = struct{}{}
			}
		}
		return inSetRun(hasNull, negate, func(a arrow.Array) func(i int) bool {
			v := newStrView(a)
			return func(i int) bool { _, ok := set[v.str(i)]; return ok }
		})
	}
	return nil
}

func inSetFixed[T interface {
	comparable
	arrow.FixedWidthType
}](list []Expr, hasNull, negate bool) kernel {
	set := make(map[T]struct{}, len(list))
	for _, e := range list {
		if c := constOf[T](e); c != nil {
			set[c[0]] = struct{}{}
		}
	}
	return inSetRun(hasNull, negate, func(a arrow.Array) func(i int) bool {
		v := values[T](a)
		return func(i int) bool { _, ok := set[v[i]]; return ok }
	})
}

// inSetRun applies SQL's IN rules over a membership test: a match is
// TRUE; no match is NULL when the list holds a NULL, else FALSE; a NULL
// argument is NULL. NOT IN negates the non-NULL results.
func inSetRun(hasNull, negate bool, member func(a arrow.Array) func(i int) bool) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		x := args[0]
		if x.DataType().ID() == arrow.NULL {
			return nullArray(ec.Mem, tBool, n), nil
		}
		in := member(x)
		bits, off := validBits(x)
		out := newBoolOut(ec.Mem, n, true)
		for i := range n {
			if bits != nil && !bitutil.BitIsSet(bits, off+i) {
				continue
			}
			switch {
			case in(i):
				out.set(i, !negate)
			case !hasNull:
				out.set(i, negate)
			}
		}
		return out.finish(n), nil
	}
}

func (l *inList) String() string {
	kw := " IN ("
	if l.negate {
		kw = " NOT IN ("
	}
	return "(" + l.arg.String() + kw + joinExprs(l.list) + "))"
}

// NewBetween builds x [NOT] BETWEEN lo AND hi as (x >= lo AND x <= hi).
func NewBetween(x, lo, hi Expr, negate bool) (Expr, error) {
	ge, err := NewCall(">=", x, lo)
	if err != nil {
		return nil, err
	}
	le, err := NewCall("<=", x, hi)
	if err != nil {
		return nil, err
	}
	e, err := NewCall("and", ge, le)
	if err != nil || !negate {
		return e, err
	}
	return NewCall("not", e)
}

package exec

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Unnest is a set-returning function applied to each row of its child
// (a lateral table function): unnest(list) yields the list's elements,
// generate_series(a, b[, step]) and range(a, b[, step]) the integers from
// a to b (b included, or not). Each output row is the child row followed
// by the value and, WITH ORDINALITY, its 1-based position. A child row
// whose function yields no rows (an empty or NULL list, NULL bounds)
// yields none, or with outer one row of NULLs (LEFT JOIN … ON TRUE). Output batches hold at most BatchRows rows however long a
// row's series is: the series is generated, never materialised.
type Unnest struct {
	child     Operator
	fn        string
	args      []Expr
	ordinal   bool
	outer     bool
	schema    *arrow.Schema
	mem       memory.Allocator
	batchRows int
	ec        *EvalContext
	metrics   Metrics

	in    arrow.RecordBatch // the child batch being expanded
	vals  []arrow.Array     // its evaluated arguments
	row   int               // the row being expanded
	k     int64             // the next element of that row
	count []int64           // elements per row of in
}

var _ Operator = (*Unnest)(nil)

// UnnestTypes are the types of the values fn yields for arguments of
// types args (one per array for unnest, which zips several as PostgreSQL
// does: as many rows as the longest, NULLs past the end of the others),
// or an error naming what fn takes.
func UnnestTypes(fn string, args []arrow.DataType) ([]arrow.DataType, error) {
	if fn == "unnest" {
		if len(args) == 0 {
			return nil, fmt.Errorf("unnest takes one or more array arguments")
		}
		out := make([]arrow.DataType, len(args))
		for i, a := range args {
			lt, ok := a.(*arrow.ListType)
			if !ok {
				return nil, fmt.Errorf("function unnest(%s) does not exist; its arguments must be arrays", typeNames(args))
			}
			out[i] = lt.Elem()
		}
		return out, nil
	}
	t, err := unnestType(fn, args)
	if err != nil {
		return nil, err
	}
	return []arrow.DataType{t}, nil
}

// unnestType is UnnestTypes' one type of the functions other than unnest.
func unnestType(fn string, args []arrow.DataType) (arrow.DataType, error) {
	switch fn {
	case "generate_series", "range":
		if len(args) < 1 || len(args) > 3 || fn == "generate_series" && len(args) == 1 {
			return nil, fmt.Errorf("%s takes (start, stop[, step]) integers", fn)
		}
		for _, a := range args {
			if !isInteger(a) && !isNull(a) {
				return nil, fmt.Errorf("%s over a row's values takes integers, not type %s", fn, TypeName(a))
			}
		}
		return tInt64, nil
	}
	return nil, fmt.Errorf("%s is not a set-returning function skade knows", fn)
}

// NewUnnest applies fn to args (over child's rows) per row; names (one
// per value column: UnnestTypes) and, with ordinality, "ordinality" name
// the new columns. Integer arguments are cast to BIGINT by the caller.
func NewUnnest(child Operator, fn string, args []Expr, names []string, ordinality, outer bool, opts HashOptions) (*Unnest, error) {
	types := make([]arrow.DataType, len(args))
	for i, a := range args {
		types[i] = a.DataType()
	}
	vts, err := UnnestTypes(fn, types)
	if err != nil {
		return nil, err
	}
	if len(names) != len(vts) {
		return nil, fmt.Errorf("exec: %s yields %d columns, and %d names were given (planner bug)", fn, len(vts), len(names))
	}
	if fn != "unnest" {
		for _, a := range args {
			if a.DataType().ID() != arrow.INT64 {
				return nil, fmt.Errorf("exec: %s arguments must be BIGINT (planner bug)", fn)
			}
		}
	}
	fields := append([]arrow.Field(nil), child.Schema().Fields()...)
	for i, vt := range vts {
		fields = append(fields, arrow.Field{Name: names[i], Type: vt, Nullable: true})
	}
	if ordinality {
		fields = append(fields, arrow.Field{Name: "ordinality", Type: tInt64, Nullable: outer})
	}
	opts = opts.withDefaults()
	return &Unnest{child: child, fn: fn, args: args, ordinal: ordinality, outer: outer, schema: arrow.NewSchema(fields, nil),
		mem: opts.Mem, batchRows: opts.BatchSize}, nil
}

func (u *Unnest) Schema() *arrow.Schema { return u.schema }
func (u *Unnest) Children() []Operator  { return []Operator{u.child} }
func (u *Unnest) Metrics() *Metrics     { return &u.metrics }
func (u *Unnest) String() string {
	parts := make([]string, len(u.args))
	for i, a := range u.args {
		parts[i] = a.String()
	}
	s := "Unnest " + u.fn + "(" + strings.Join(parts, ", ") + ")"
	if u.ordinal {
		s += " WITH ORDINALITY"
	}
	if u.outer {
		s += " outer"
	}
	return s
}

func (u *Unnest) Open(ctx context.Context) error {
	u.ec = NewEvalContext(ctx)
	u.ec.Mem = u.mem
	return u.child.Open(ctx)
}

func (u *Unnest) Close() error {
	u.drop()
	return u.child.Close()
}

// drop releases the batch being expanded.
func (u *Unnest) drop() {
	if u.in != nil {
		u.in.Release()
		u.in = nil
	}
	releaseAll(u.vals)
	u.vals = nil
}

// load evaluates the arguments over a new child batch and counts each
// row's elements.
func (u *Unnest) load(b arrow.RecordBatch) error {
	u.drop()
	u.in, u.row, u.k = b, 0, 0
	n := int(b.NumRows())
	u.vals = make([]arrow.Array, len(u.args))
	for i, a := range u.args {
		v, err := a.Eval(u.ec, b)
		if err != nil {
			return err
		}
		u.vals[i] = v
	}
	u.count = htGrow(u.count, n)
	for i := 0; i < n; i++ {
		c, err := u.rowCount(i)
		if err != nil {
			return err
		}
		u.count[i] = c
	}
	return nil
}

// series returns row i's start, stop and step, and whether none is NULL.
func (u *Unnest) series(i int) (start, stop, step int64, ok bool) {
	step = 1
	v := func(j int) (int64, bool) {
		a := u.vals[j].(*array.Int64)
		return a.Value(i), a.IsValid(i)
	}
	for j := range u.vals {
		if u.vals[j].IsNull(i) {
			return 0, 0, 0, false
		}
	}
	switch len(u.vals) {
	case 1:
		stop, _ = v(0)
	default:
		start, _ = v(0)
		stop, _ = v(1)
		if len(u.vals) == 3 {
			step, _ = v(2)
		}
	}
	return start, stop, step, true
}

func (u *Unnest) rowCount(i int) (int64, error) {
	if u.fn == "unnest" {
		// the longest array's length
		var n int64
		for _, v := range u.vals {
			l := v.(*array.List)
			if l.IsNull(i) {
				continue
			}
			s, e := l.ValueOffsets(i)
			n = max(n, e-s)
		}
		return n, nil
	}
	start, stop, step, ok := u.series(i)
	if !ok {
		return 0, nil
	}
	if step == 0 {
		return 0, fmt.Errorf("%s: step size cannot equal zero", u.fn)
	}
	if u.fn == "range" { // stop excluded
		if step > 0 {
			stop--
		} else {
			stop++
		}
	}
	if step > 0 && stop < start || step < 0 && stop > start {
		return 0, nil
	}
	// (stop-start)/step + 1 without overflow
	d := uint64(stop - start)
	s := uint64(step)
	if step < 0 {
		d, s = uint64(start-stop), uint64(-step)
	}
	n := d/s + 1
	if n > 1<<53 {
		return 0, fmt.Errorf("%s: %d values are too many", u.fn, n)
	}
	return int64(n), nil
}

func (u *Unnest) Next(ctx context.Context) (arrow.RecordBatch, error) {
	t0 := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if u.in != nil && u.row < int(u.in.NumRows()) {
			out, err := u.emit()
			if err != nil {
				return nil, err
			}
			if out != nil {
				u.metrics.Add(out, t0)
				return out, nil
			}
			continue
		}
		b, err := u.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if err := u.load(b); err != nil {
			return nil, err
		}
	}
}

// emit builds one output batch from the current child batch, from the
// current row and element on; nil when the rest of the batch yields
// nothing.
func (u *Unnest) emit() (arrow.RecordBatch, error) {
	n := int(u.in.NumRows())
	var rows []int32
	var elems [][]int32 // unnest: per array, positions in its values (-1: past its end)
	if u.fn == "unnest" {
		elems = make([][]int32, len(u.vals))
	}
	var ints []int64 // series: the values
	var ords []int64 // 1-based positions
	var nulls []int  // output rows of NULL-extended input rows (outer)
	for u.row < n && len(rows) < u.batchRows {
		c := u.count[u.row]
		if c == 0 && u.outer && u.k == 0 {
			// the row's one NULL-extended row
			rows = append(rows, int32(u.row))
			for k := range elems {
				elems[k] = append(elems[k], -1)
			}
			ints = append(ints, 0)
			nulls = append(nulls, len(rows)-1)
			ords = append(ords, 0)
			u.row++
			continue
		}
		if u.k >= c {
			u.row, u.k = u.row+1, 0
			continue
		}
		take := min(c-u.k, int64(u.batchRows-len(rows)))
		var start, step int64
		if u.fn == "unnest" {
			for k, v := range u.vals {
				l := v.(*array.List)
				s, e := l.ValueOffsets(u.row)
				if l.IsNull(u.row) {
					s, e = 0, 0
				}
				for j := u.k; j < u.k+take; j++ {
					p := int32(-1)
					if j < e-s {
						p = int32(s + j)
					}
					elems[k] = append(elems[k], p)
				}
			}
		} else {
			start, _, step, _ = u.series(u.row)
		}
		for j := u.k; j < u.k+take; j++ {
			rows = append(rows, int32(u.row))
			ints = append(ints, start+j*step)
			ords = append(ords, j+1)
		}
		u.k += take
	}
	if len(rows) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, 0, u.schema.NumFields())
	defer func() { releaseAll(cols) }()
	for i := 0; i < int(u.in.NumCols()); i++ {
		c, err := takeArray(u.mem, u.in.Column(i), rows)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if u.fn == "unnest" {
		for k, v := range u.vals {
			x, err := takeArray(u.mem, v.(*array.List).ListValues(), elems[k])
			if err != nil {
				return nil, err
			}
			cols = append(cols, x)
		}
	} else {
		cols = append(cols, int64Column(u.mem, ints, nulls))
	}
	if u.ordinal {
		cols = append(cols, int64Column(u.mem, ords, nulls))
	}
	return array.NewRecordBatch(u.schema, cols, int64(len(rows))), nil
}

// int64Column builds a BIGINT array of vs, NULL at the positions nulls.
func int64Column(mem memory.Allocator, vs []int64, nulls []int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	var valid []bool
	if len(nulls) > 0 {
		valid = make([]bool, len(vs))
		for i := range valid {
			valid[i] = true
		}
		for _, i := range nulls {
			valid[i] = false
		}
	}
	b.AppendValues(vs, valid)
	return b.NewArray()
}

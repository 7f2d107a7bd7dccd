package exec

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// Aggregate is one aggregate call of a GROUP BY query, e.g.
// count(DISTINCT x) FILTER (WHERE y > 0) or string_agg(s, ',' ORDER BY t).
//
// Result types follow Postgres where Arrow allows, with these choices:
//
//	count(*), count(x)         BIGINT, never NULL
//	sum(tinyint..integer)      BIGINT (error "bigint out of range" on overflow)
//	sum(bigint)                DECIMAL(38,0) (Postgres: numeric)
//	sum(decimal(p,s))          DECIMAL(38,s) (error on overflow of 38 digits)
//	sum(real, double)          DOUBLE
//	avg(integers, floats)      DOUBLE (Postgres: numeric for integers)
//	avg(decimal(p,s))          DECIMAL(38, max(s,6)), rounded half away from zero
//	min, max                   the argument type; strings compare bytewise
//	                           (C collation), NaN is larger than every number
//	bool_and, bool_or          BOOLEAN
//	string_agg(x, sep)         VARCHAR (BLOB for BLOB arguments)
//	array_agg(x)               LIST of x, NULL elements kept
//	any_value(x)               the argument type, the first non-NULL value seen
//
// Every aggregate but count and array_agg ignores NULL inputs and returns
// NULL for a group without input rows.
type Aggregate struct {
	Name     string
	Args     []Expr
	Distinct bool
	Filter   Expr
	OrderBy  []SortKey

	kind aggKind
	typ  arrow.DataType
}

type aggKind uint8

const (
	aggCountStar aggKind = iota
	aggCount
	aggSum
	aggAvg
	aggMin
	aggMax
	aggBoolAnd
	aggBoolOr
	aggStringAgg
	aggArrayAgg
	aggAnyValue
)

// AggregateNames lists the aggregate functions NewAggregate knows.
var AggregateNames = []string{"any_value", "array_agg", "avg", "bool_and", "bool_or", "count", "max", "min", "string_agg", "sum"}

// NewAggregate resolves an aggregate call. count(*) is count with no
// arguments. orderBy matters to string_agg and array_agg and is accepted
// (and ignored) for the others, as Postgres does.
func NewAggregate(name string, args []Expr, distinct bool, filter Expr, orderBy []SortKey) (*Aggregate, error) {
	a := &Aggregate{Name: strings.ToLower(name), Args: args, Distinct: distinct, Filter: filter, OrderBy: orderBy}
	if filter != nil && filter.DataType().ID() != arrow.BOOL {
		return nil, fmt.Errorf("argument of FILTER must be type boolean, not type %s", htSQLType(filter.DataType()))
	}
	for _, k := range orderBy {
		if err := htOrderable(k.Expr.DataType()); err != nil {
			return nil, fmt.Errorf("%s: cannot order by %s: %w", a.Name, k.Expr, err)
		}
	}
	noMatch := func() error {
		ts := make([]string, len(args))
		for i, e := range args {
			ts[i] = htSQLType(e.DataType())
		}
		return fmt.Errorf("function %s(%s) does not exist; no aggregate matches the argument types, you might need an explicit cast",
			a.Name, strings.Join(ts, ", "))
	}
	var t arrow.DataType
	if len(args) > 0 {
		t = args[0].DataType()
	}
	one := len(args) == 1
	switch a.Name {
	case "count":
		switch len(args) {
		case 0:
			if distinct {
				return nil, fmt.Errorf("count(DISTINCT *) is not allowed; name a column: count(DISTINCT x)")
			}
			a.kind = aggCountStar
		case 1:
			a.kind = aggCount
		default:
			return nil, noMatch()
		}
		a.typ = arrow.PrimitiveTypes.Int64
	case "sum", "avg":
		if !one {
			return nil, noMatch()
		}
		a.kind = aggSum
		if a.Name == "avg" {
			a.kind = aggAvg
		}
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32:
			a.typ = arrow.PrimitiveTypes.Int64
		case arrow.INT64:
			a.typ = &arrow.Decimal128Type{Precision: 38, Scale: 0}
		case arrow.FLOAT32, arrow.FLOAT64:
			a.typ = arrow.PrimitiveTypes.Float64
		case arrow.DECIMAL128:
			s := t.(*arrow.Decimal128Type).Scale
			if a.kind == aggAvg {
				s = max(s, 6)
			}
			a.typ = &arrow.Decimal128Type{Precision: 38, Scale: s}
		default:
			return nil, noMatch()
		}
		if a.kind == aggAvg && t.ID() != arrow.DECIMAL128 {
			a.typ = arrow.PrimitiveTypes.Float64
		}
	case "min", "max":
		if !one {
			return nil, noMatch()
		}
		if err := htOrderable(t); err != nil {
			return nil, noMatch()
		}
		a.kind, a.typ = aggMin, t
		if a.Name == "max" {
			a.kind = aggMax
		}
	case "bool_and", "bool_or":
		if !one || t.ID() != arrow.BOOL {
			return nil, noMatch()
		}
		a.kind, a.typ = aggBoolAnd, t
		if a.Name == "bool_or" {
			a.kind = aggBoolOr
		}
	case "string_agg":
		if len(args) != 2 || !arrow.TypeEqual(args[0].DataType(), args[1].DataType()) ||
			(t.ID() != arrow.STRING && t.ID() != arrow.BINARY) {
			return nil, noMatch()
		}
		a.kind, a.typ = aggStringAgg, t
	case "array_agg":
		if !one {
			return nil, noMatch()
		}
		a.kind, a.typ = aggArrayAgg, arrow.ListOf(t)
	case "any_value":
		if !one {
			return nil, noMatch()
		}
		a.kind, a.typ = aggAnyValue, t
	default:
		ts := make([]string, len(args))
		for i, e := range args {
			ts[i] = htSQLType(e.DataType())
		}
		return nil, fmt.Errorf("function %s(%s) does not exist; known aggregates are %s",
			a.Name, strings.Join(ts, ", "), strings.Join(AggregateNames, ", "))
	}
	if a.kind == aggSum || a.kind == aggAvg || a.kind == aggMin || a.kind == aggMax {
		// Arrow's NULL type has no values to sum or compare.
		if t.ID() == arrow.NULL {
			return nil, noMatch()
		}
	}
	if distinct {
		if _, err := htKeyValueWidth(t); err != nil {
			return nil, fmt.Errorf("%s(DISTINCT ...): %w", a.Name, err)
		}
	}
	return a, nil
}

// DataType is the type of the aggregate's result.
func (a *Aggregate) DataType() arrow.DataType { return a.typ }

// Nullable reports whether a result can be NULL (everything but count).
func (a *Aggregate) Nullable() bool { return a.kind != aggCount && a.kind != aggCountStar }

func (a *Aggregate) String() string {
	var sb strings.Builder
	sb.WriteString(a.Name)
	sb.WriteByte('(')
	if a.Distinct {
		sb.WriteString("DISTINCT ")
	}
	if a.kind == aggCountStar {
		sb.WriteByte('*')
	}
	for i, e := range a.Args {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(e.String())
	}
	if len(a.OrderBy) > 0 {
		sb.WriteString(" ORDER BY ")
		for i, k := range a.OrderBy {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(k.String())
		}
	}
	sb.WriteByte(')')
	if a.Filter != nil {
		sb.WriteString(" FILTER (WHERE " + a.Filter.String() + ")")
	}
	return sb.String()
}

// inputs are the expressions evaluated per batch: the arguments, then the
// ORDER BY keys when the aggregate is order-sensitive.
func (a *Aggregate) inputs() []Expr {
	in := append([]Expr{}, a.Args...)
	if a.kind == aggStringAgg || a.kind == aggArrayAgg {
		for _, k := range a.OrderBy {
			in = append(in, k.Expr)
		}
	}
	return in
}

// htSQLType names an Arrow type the way error messages show SQL types,
// e.g. "bigint", "text", "decimal(10,2)".
func htSQLType(t arrow.DataType) string {
	switch t.ID() {
	case arrow.NULL:
		return "unknown"
	case arrow.BOOL:
		return "boolean"
	case arrow.INT8:
		return "tinyint"
	case arrow.INT16:
		return "smallint"
	case arrow.INT32:
		return "integer"
	case arrow.INT64:
		return "bigint"
	case arrow.FLOAT32:
		return "real"
	case arrow.FLOAT64:
		return "double"
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return fmt.Sprintf("decimal(%d,%d)", d.Precision, d.Scale)
	case arrow.STRING, arrow.LARGE_STRING:
		return "text"
	case arrow.BINARY, arrow.LARGE_BINARY:
		return "blob"
	case arrow.DATE32:
		return "date"
	case arrow.TIME64:
		return "time"
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone != "" {
			return "timestamptz"
		}
		return "timestamp"
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return "interval"
	case arrow.EXTENSION:
		if t.(arrow.ExtensionType).ExtensionName() == "arrow.uuid" {
			return "uuid"
		}
	case arrow.LIST:
		return htSQLType(t.(*arrow.ListType).Elem()) + "[]"
	}
	return t.String()
}

// HashAggregate groups its input by the group-by expressions and computes
// aggregates per group. With no group-by expressions it returns exactly
// one row, also for an empty input (count(*) = 0, sum = NULL).
//
// Output: the group-by values, then one column per aggregate, named by
// their String(). Groups come out in order of first appearance. The whole
// state (hash table, group keys, aggregate state) is reserved in the
// Budget; output starts after the input ends.
type HashAggregate struct {
	input   Operator
	groupBy []Expr
	aggs    []*Aggregate
	opts    HashOptions
	schema  *arrow.Schema
	metrics Metrics

	enc    *KeyEncoder
	table  *HashTable
	states []htAggState
	dists  []*htDistinct // per aggregate, nil unless DISTINCT
	keyCh  [][]arrow.Array
	keyB   int64
	groups int
	res    htReservation
	cctx   context.Context
	ec     *EvalContext

	out  arrow.RecordBatch
	off  int64
	done bool
	err  error
}

var _ Operator = (*HashAggregate)(nil)

// NewHashAggregate returns an aggregation of input.
func NewHashAggregate(input Operator, groupBy []Expr, aggs []*Aggregate, opts HashOptions) (*HashAggregate, error) {
	if input == nil {
		return nil, fmt.Errorf("hash aggregate: missing input (planner bug)")
	}
	fields := make([]arrow.Field, 0, len(groupBy)+len(aggs))
	for _, g := range groupBy {
		fields = append(fields, arrow.Field{Name: g.String(), Type: g.DataType(), Nullable: true})
	}
	for i, a := range aggs {
		if a == nil || a.typ == nil {
			return nil, fmt.Errorf("hash aggregate: aggregate %d was not made by NewAggregate (planner bug)", i+1)
		}
		fields = append(fields, arrow.Field{Name: a.String(), Type: a.typ, Nullable: a.Nullable()})
	}
	h := &HashAggregate{input: input, groupBy: groupBy, aggs: aggs, opts: opts.withDefaults(),
		schema: arrow.NewSchema(fields, nil)}
	if len(groupBy) > 0 {
		enc, err := NewKeyEncoder(htExprTypes(groupBy))
		if err != nil {
			return nil, fmt.Errorf("hash aggregate: GROUP BY: %w", err)
		}
		h.enc = enc
	}
	h.res = htReservation{budget: opts.Budget, what: "hash aggregate state"}
	return h, nil
}

func (h *HashAggregate) Schema() *arrow.Schema { return h.schema }
func (h *HashAggregate) Children() []Operator  { return []Operator{h.input} }
func (h *HashAggregate) Metrics() *Metrics     { return &h.metrics }

func (h *HashAggregate) String() string {
	s := "HashAggregate"
	if len(h.groupBy) > 0 {
		s += " group by " + htExprList(h.groupBy)
	}
	parts := make([]string, len(h.aggs))
	for i, a := range h.aggs {
		parts[i] = a.String()
	}
	return s + " [" + strings.Join(parts, ", ") + "]"
}

func (h *HashAggregate) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { h.metrics.Elapsed.Add(int64(time.Since(start))) }()
	h.cctx = compute.WithAllocator(ctx, h.opts.Mem)
	h.ec = h.opts.evalContext(ctx)
	h.states = make([]htAggState, len(h.aggs))
	h.dists = make([]*htDistinct, len(h.aggs))
	for i, a := range h.aggs {
		st, err := newAggState(a, h.opts.Mem)
		if err != nil {
			return err
		}
		h.states[i] = st
		if a.Distinct {
			d, err := newHTDistinct(a.Args[0].DataType())
			if err != nil {
				return err
			}
			h.dists[i] = d
		}
	}
	if h.enc != nil {
		h.table = NewHashTable(h.enc.Width(), 0)
	} else {
		h.groups = 1
		h.resize()
	}
	return h.input.Open(ctx)
}

func (h *HashAggregate) resize() {
	for _, s := range h.states {
		s.resize(h.groups)
	}
}

func (h *HashAggregate) Close() error {
	for _, s := range h.states {
		if s != nil {
			s.release()
		}
	}
	h.states = nil
	for _, ch := range h.keyCh {
		htReleaseArrays(ch)
	}
	h.keyCh = nil
	if h.out != nil {
		h.out.Release()
		h.out = nil
	}
	h.table = nil
	h.res.release()
	return h.input.Close()
}

func (h *HashAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if h.err != nil {
		return nil, h.err
	}
	if !h.done {
		if err := h.consume(ctx); err != nil {
			h.err = err // the state is half updated: fail every later call too
			return nil, err
		}
		h.done = true
	}
	if h.out == nil || h.off >= h.out.NumRows() {
		h.metrics.Add(nil, start)
		return nil, io.EOF
	}
	end := min(h.off+int64(h.opts.BatchSize), h.out.NumRows())
	b := h.out.NewSlice(h.off, end)
	h.off = end
	h.metrics.Add(b, start)
	return b, nil
}

func (h *HashAggregate) consume(ctx context.Context) error {
	var keys RowKeys
	var ids []int32
	var sel []bool
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := h.input.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		err = h.addBatch(b, &keys, &ids, &sel)
		b.Release()
		if err != nil {
			return err
		}
	}
	return h.finish()
}

func (h *HashAggregate) addBatch(b arrow.RecordBatch, keys *RowKeys, ids *[]int32, sel *[]bool) error {
	n := int(b.NumRows())
	*ids = htGrow(*ids, n)
	if h.table == nil {
		clear(*ids)
	} else {
		cols, err := htEvalExprs(h.ec, h.groupBy, b)
		if err != nil {
			return err
		}
		defer htReleaseArrays(cols)
		if err := h.enc.Encode(cols, keys); err != nil {
			return err
		}
		before := int32(h.table.Len())
		if h.table.FindOrInsertRows(keys, *ids, false /* skipNull */) > 0 {
			// New groups appear in row order: their first rows give the
			// group key values.
			var first []int32
			next := before
			for r, id := range (*ids)[:n] {
				if id == next {
					first = append(first, int32(r))
					next++
				}
			}
			kc, err := htTakeColumns(h.cctx, cols, first)
			if err != nil {
				return err
			}
			h.keyCh = append(h.keyCh, kc)
			h.keyB += ArraysBytes(kc)
			h.groups = h.table.Len()
			h.resize()
		}
	}
	for i, a := range h.aggs {
		if err := h.updateAgg(i, a, b, (*ids)[:n], sel); err != nil {
			return err
		}
	}
	total := h.keyB
	if h.table != nil {
		total += h.table.Bytes()
	}
	for i, s := range h.states {
		total += s.bytes()
		if h.dists[i] != nil {
			total += h.dists[i].table.Bytes()
		}
	}
	return h.res.setTo(total)
}

func (h *HashAggregate) updateAgg(i int, a *Aggregate, b arrow.RecordBatch, ids []int32, selBuf *[]bool) error {
	n := len(ids)
	var sel []bool
	if a.Filter != nil {
		m, err := a.Filter.Eval(h.ec, b)
		if err != nil {
			return err
		}
		mb, ok := m.(*array.Boolean)
		if !ok || mb.Len() != n {
			m.Release()
			return fmt.Errorf("hash aggregate: FILTER %s returned %s (bug)", a.Filter, m.DataType())
		}
		*selBuf = htGrow(*selBuf, n)
		sel = *selBuf
		for r := 0; r < n; r++ {
			sel[r] = mb.IsValid(r) && mb.Value(r)
		}
		m.Release()
	}
	args, err := htEvalExprs(h.ec, a.inputs(), b)
	if err != nil {
		return err
	}
	defer htReleaseArrays(args)
	if d := h.dists[i]; d != nil {
		if sel == nil {
			*selBuf = htGrow(*selBuf, n)
			sel = *selBuf
			for r := range sel {
				sel[r] = true
			}
		}
		if err := d.filter(ids, args[0], sel); err != nil {
			return err
		}
	}
	if err := h.states[i].update(h.cctx, ids, args, sel); err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	return nil
}

func (h *HashAggregate) finish() error {
	n := h.groups
	cols := make([]arrow.Array, 0, len(h.schema.Fields()))
	for k := range h.groupBy {
		parts := make([]arrow.Array, len(h.keyCh))
		for c, ch := range h.keyCh {
			parts[c] = ch[k]
		}
		var col arrow.Array
		var err error
		switch len(parts) {
		case 0:
			col = array.MakeArrayOfNull(h.opts.Mem, h.groupBy[k].DataType(), 0)
		case 1:
			col = parts[0]
			col.Retain()
		default:
			if col, err = array.Concatenate(parts, h.opts.Mem); err != nil {
				htReleaseArrays(cols)
				return fmt.Errorf("hash aggregate: group keys: %w", err)
			}
		}
		cols = append(cols, col)
	}
	for _, ch := range h.keyCh {
		htReleaseArrays(ch)
	}
	h.keyCh = nil
	for i, s := range h.states {
		col, err := s.finish(h.cctx, n)
		if err != nil {
			htReleaseArrays(cols)
			return fmt.Errorf("%s: %w", h.aggs[i], err)
		}
		cols = append(cols, col)
	}
	h.out = htNewBatch(h.schema, cols, n)
	h.metrics.Set("groups", int64(n))
	return nil
}

// htDistinct passes each (group, value) pair through once.
type htDistinct struct {
	enc   *KeyEncoder
	table *HashTable
	keys  RowKeys
}

func newHTDistinct(t arrow.DataType) (*htDistinct, error) {
	enc, err := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int32, t})
	if err != nil {
		return nil, err
	}
	return &htDistinct{enc: enc, table: NewHashTable(enc.Width(), 0)}, nil
}

// filter clears sel[r] for rows whose (group, value) was seen before.
func (d *htDistinct) filter(ids []int32, vals arrow.Array, sel []bool) error {
	ga := htIndexArray(ids)
	err := d.enc.Encode([]arrow.Array{ga, vals}, &d.keys)
	ga.Release()
	if err != nil {
		return err
	}
	for r := range ids {
		if !sel[r] {
			continue
		}
		_, isNew := d.table.FindOrInsert(d.keys.Key(r), d.keys.Hashes[r])
		sel[r] = isNew
	}
	return nil
}

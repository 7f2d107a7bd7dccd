package exec

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// DelimJoin is the dependent join of a decorrelated subquery: Neumann and
// Kemper's magic set, DuckDB's delim join. It reads its left input (the
// outer rows) into memory, hands the distinct values of the correlation
// keys to the DelimScan leaves of its right input (the subquery, computed
// once per distinct outer value rather than once per outer row), and
// left-joins the outer rows to the right's rows on the keys, NULL keys
// matching NULL keys. The left input is read once, so an outer side that
// cannot be read twice (a stream) and volatile functions stay right.
type DelimJoin struct {
	left, right         Operator
	leftKeys, rightKeys []Expr
	state               *DelimState
	opts                HashOptions
	rows                *heldRows // the outer rows, replayed into join
	join                *HashJoin
	metrics             Metrics
}

var _ Operator = (*DelimJoin)(nil)

// DelimState carries the distinct key values from a DelimJoin to its
// DelimScans.
type DelimState struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
}

// NewDelimState is the state of one DelimJoin, whose keys have the given
// types.
func NewDelimState(names []string, types []arrow.DataType) *DelimState {
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		fields[i] = arrow.Field{Name: names[i], Type: t, Nullable: true}
	}
	return &DelimState{schema: arrow.NewSchema(fields, nil)}
}

func (s *DelimState) release() {
	htReleaseBatches(s.batches)
	s.batches = nil
}

// NewDelimJoin joins left to right, which reads state through its
// DelimScans, on leftKeys[i] IS NOT DISTINCT FROM rightKeys[i] and the
// residual (over left's columns then right's, may be nil). kind is
// JoinLeft (left's columns then right's, right's NULL for a left row
// without match) or JoinMark (left's columns and the mark, the residual
// judged as a correlated IN: see JoinMark).
func NewDelimJoin(kind JoinKind, left, right Operator, leftKeys, rightKeys []Expr, residual Expr, state *DelimState, opts HashOptions) (*DelimJoin, error) {
	if kind != JoinLeft && kind != JoinMark {
		return nil, fmt.Errorf("delim join: a %s join (planner bug)", kind)
	}
	if len(leftKeys) == 0 || len(leftKeys) != len(rightKeys) || len(leftKeys) != state.schema.NumFields() {
		return nil, fmt.Errorf("delim join: %d left keys, %d right keys and %d delim columns (planner bug)", len(leftKeys), len(rightKeys), state.schema.NumFields())
	}
	for i, k := range leftKeys {
		if !arrow.TypeEqual(k.DataType(), state.schema.Field(i).Type) {
			return nil, fmt.Errorf("delim join: key %d is %s, its delim column %s (planner bug)", i+1, k.DataType(), state.schema.Field(i).Type)
		}
	}
	d := &DelimJoin{left: left, right: right, leftKeys: leftKeys, rightKeys: rightKeys, state: state, opts: opts.withDefaults(),
		rows: &heldRows{schema: left.Schema()}}
	jopts := d.opts
	jopts.NullSafeKeys = true
	jopts.BuildLeft = false
	j, err := NewHashJoin(kind, d.rows, right, leftKeys, rightKeys, residual, jopts)
	if err != nil {
		return nil, err
	}
	d.join = j
	return d, nil
}

func (d *DelimJoin) Schema() *arrow.Schema { return d.join.Schema() }
func (d *DelimJoin) Children() []Operator  { return []Operator{d.left, d.right} }
func (d *DelimJoin) Metrics() *Metrics     { return &d.metrics }
func (d *DelimJoin) String() string {
	ks := make([]string, len(d.leftKeys))
	for i := range d.leftKeys {
		ks[i] = d.leftKeys[i].String() + " IS NOT DISTINCT FROM " + d.rightKeys[i].String()
	}
	s := "DelimJoin " + d.join.kind.String() + " on " + strings.Join(ks, " AND ")
	if d.join.residual != nil {
		s += " residual " + d.join.residual.String()
	}
	return s
}

func (d *DelimJoin) Open(ctx context.Context) (err error) {
	start := time.Now()
	defer func() { d.metrics.Elapsed.Add(int64(time.Since(start))) }()
	if err := d.left.Open(ctx); err != nil {
		return err
	}
	// the outer rows, once
	jb, err := BuildJoin(ctx, d.left, nil, d.opts, "correlated subquery: outer rows")
	d.left.Close()
	if err != nil {
		return err
	}
	defer jb.Release()
	d.rows.release()
	if jb.Rows > 0 {
		d.rows.batches = []arrow.RecordBatch{array.NewRecordBatch(d.left.Schema(), jb.Columns, int64(jb.Rows))}
	}
	// their distinct key values
	vals, err := NewValues(d.left.Schema(), d.rows.batches)
	if err != nil {
		return err
	}
	names := make([]string, len(d.leftKeys))
	for i := range names {
		names[i] = d.state.schema.Field(i).Name
	}
	keys, err := NewProject(vals, d.leftKeys, names, d.opts.Mem)
	if err != nil {
		vals.Close()
		return err
	}
	distinct, err := NewDistinct(keys, d.opts)
	if err != nil {
		keys.Close()
		return err
	}
	defer distinct.Close()
	d.state.release()
	if err := distinct.Open(ctx); err != nil {
		return err
	}
	for {
		b, err := distinct.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		d.state.batches = append(d.state.batches, b)
	}
	// the subquery over them, joined back
	return d.join.Open(ctx)
}

func (d *DelimJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	b, err := d.join.Next(ctx)
	if b != nil {
		d.metrics.Add(b, start)
	}
	return b, err
}

func (d *DelimJoin) Close() error {
	err := d.join.Close()
	d.left.Close()
	d.rows.release()
	d.state.release()
	return err
}

// heldRows replays the outer rows a DelimJoin read.
type heldRows struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	pos     int
	metrics Metrics
}

func (h *heldRows) Schema() *arrow.Schema { return h.schema }
func (h *heldRows) Children() []Operator  { return nil }
func (h *heldRows) Metrics() *Metrics     { return &h.metrics }
func (h *heldRows) String() string        { return "outer rows" }
func (h *heldRows) Open(context.Context) error {
	h.pos = 0
	return nil
}
func (h *heldRows) Close() error { return nil }
func (h *heldRows) release() {
	htReleaseBatches(h.batches)
	h.batches = nil
}
func (h *heldRows) Next(context.Context) (arrow.RecordBatch, error) {
	if h.pos >= len(h.batches) {
		return nil, io.EOF
	}
	b := h.batches[h.pos]
	h.pos++
	b.Retain()
	return b, nil
}

// DelimScan reads the distinct correlation key values its DelimJoin
// computed; a decorrelated subquery starts from it.
type DelimScan struct {
	state   *DelimState
	pos     int
	metrics Metrics
}

var _ Operator = (*DelimScan)(nil)

// NewDelimScan reads state.
func NewDelimScan(state *DelimState) *DelimScan { return &DelimScan{state: state} }

func (s *DelimScan) Schema() *arrow.Schema { return s.state.schema }
func (s *DelimScan) Children() []Operator  { return nil }
func (s *DelimScan) Metrics() *Metrics     { return &s.metrics }
func (s *DelimScan) String() string        { return "DelimScan" }
func (s *DelimScan) Open(context.Context) error {
	s.pos = 0
	return nil
}
func (s *DelimScan) Close() error { return nil }

func (s *DelimScan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.pos >= len(s.state.batches) {
		return nil, io.EOF
	}
	b := s.state.batches[s.pos]
	s.pos++
	b.Retain()
	s.metrics.Add(b, time.Now())
	return b, nil
}

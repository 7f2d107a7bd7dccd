package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// SetOpKind is a set operation over whole rows.
type SetOpKind uint8

const (
	// SetUnion is UNION: the distinct rows of both inputs.
	SetUnion SetOpKind = iota
	// SetExcept is EXCEPT: distinct left rows that are not right rows.
	SetExcept
	// SetExceptAll is EXCEPT ALL: a row appearing l times on the left and
	// r times on the right appears max(l-r, 0) times.
	SetExceptAll
	// SetIntersect is INTERSECT: distinct rows in both inputs.
	SetIntersect
	// SetIntersectAll is INTERSECT ALL: min(l, r) copies.
	SetIntersectAll
)

func (k SetOpKind) String() string {
	switch k {
	case SetUnion:
		return "union"
	case SetExcept:
		return "except"
	case SetExceptAll:
		return "except all"
	case SetIntersect:
		return "intersect"
	case SetIntersectAll:
		return "intersect all"
	}
	return fmt.Sprintf("SetOpKind(%d)", uint8(k))
}

// SetOp is UNION, EXCEPT [ALL] or INTERSECT [ALL], hash based. Rows are
// compared whole, NULL equal to NULL, as SQL set operations do. UNION ALL
// is UnionAll.
//
// UNION streams both inputs through one table of seen rows. The others
// first build a table of the right input's rows with their counts, then
// stream the left input, emitting rows in left order: for EXCEPT and
// INTERSECT the first occurrence of a qualifying row, for the ALL forms
// the occurrences beyond (EXCEPT ALL) or up to (INTERSECT ALL) the right
// count. The table is reserved in the Budget.
type SetOp struct {
	kind        SetOpKind
	left, right Operator
	schema      *arrow.Schema
	opts        HashOptions
	metrics     Metrics

	enc      *KeyEncoder
	table    *HashTable
	rcount   []int64 // per row group: occurrences on the right
	lcount   []int64 // per row group: occurrences on the left so far
	res      htReservation
	cctx     context.Context
	built    bool
	leftDone bool
	keys     RowKeys
	ids, idx []int32
}

var _ Operator = (*SetOp)(nil)

// NewSetOp returns left <kind> right. The inputs must have the same column
// types (the binder coerces first); the output takes the left names.
func NewSetOp(kind SetOpKind, left, right Operator, opts HashOptions) (*SetOp, error) {
	if left == nil || right == nil {
		return nil, fmt.Errorf("%s: missing input (planner bug)", kind)
	}
	if kind > SetIntersectAll {
		return nil, fmt.Errorf("set operation: unknown kind %d (planner bug)", kind)
	}
	schema, err := htSetSchema(kind.String(), left.Schema(), right.Schema(), 2)
	if err != nil {
		return nil, err
	}
	enc, err := htRowEncoder(schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	return &SetOp{kind: kind, left: left, right: right, schema: schema, opts: opts.withDefaults(), enc: enc,
		res: htReservation{budget: opts.Budget, what: kind.String() + " (rows seen)"}}, nil
}

func (s *SetOp) Schema() *arrow.Schema { return s.schema }
func (s *SetOp) Children() []Operator  { return []Operator{s.left, s.right} }
func (s *SetOp) Metrics() *Metrics     { return &s.metrics }
func (s *SetOp) String() string        { return "SetOp " + s.kind.String() }

func (s *SetOp) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { s.metrics.Elapsed.Add(int64(time.Since(start))) }()
	s.cctx = compute.WithAllocator(ctx, s.opts.Mem)
	s.table = NewHashTable(s.enc.Width(), 0)
	if err := s.left.Open(ctx); err != nil {
		return err
	}
	return s.right.Open(ctx)
}

func (s *SetOp) Close() error {
	s.table = nil
	s.res.release()
	return errors.Join(s.left.Close(), s.right.Close())
}

func (s *SetOp) account() error {
	return s.res.setTo(s.table.Bytes() + int64(cap(s.rcount)+cap(s.lcount))*8)
}

// assign gives every row of b its row group id in s.ids.
func (s *SetOp) assign(b arrow.RecordBatch) error {
	if err := s.enc.Encode(b.Columns(), &s.keys); err != nil {
		return err
	}
	s.ids = htGrow(s.ids, int(b.NumRows()))
	s.table.FindOrInsertRows(&s.keys, s.ids, false /* skipNull */)
	for len(s.rcount) < s.table.Len() {
		s.rcount = append(s.rcount, 0)
		s.lcount = append(s.lcount, 0)
	}
	return s.account()
}

func (s *SetOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if !s.built && s.kind != SetUnion {
		s.built = true
		for {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b, err := s.right.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			err = s.assign(b)
			if err == nil {
				for _, id := range s.ids[:b.NumRows()] {
					s.rcount[id]++
				}
			}
			b.Release()
			if err != nil {
				return nil, err
			}
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in := s.left
		if s.leftDone {
			in = s.right // UNION only: the other kinds end with the left input
		}
		b, err := in.Next(ctx)
		if err == io.EOF {
			if s.kind == SetUnion && !s.leftDone {
				s.leftDone = true
				continue
			}
			s.leftDone = true
			s.metrics.Add(nil, start)
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		out, err := s.filter(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			s.metrics.Add(out, start)
			return out, nil
		}
	}
}

// filter returns the rows of b the operation emits, or nil.
func (s *SetOp) filter(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if err := s.assign(b); err != nil {
		return nil, err
	}
	n := int(b.NumRows())
	s.idx = s.idx[:0]
	for r, id := range s.ids[:n] {
		s.lcount[id]++
		l, rc := s.lcount[id], s.rcount[id]
		var keep bool
		switch s.kind {
		case SetUnion:
			keep = l == 1
		case SetExcept:
			keep = rc == 0 && l == 1
		case SetExceptAll:
			keep = l > rc
		case SetIntersect:
			keep = rc > 0 && l == 1
		case SetIntersectAll:
			keep = l <= rc
		}
		if keep {
			s.idx = append(s.idx, int32(r))
		}
	}
	if len(s.idx) == 0 {
		return nil, nil
	}
	if len(s.idx) == n {
		b.Retain()
		return htRelabel(b, s.schema), nil
	}
	cols, err := htTakeColumns(s.cctx, b.Columns(), s.idx)
	if err != nil {
		return nil, err
	}
	return htNewBatch(s.schema, cols, len(s.idx)), nil
}

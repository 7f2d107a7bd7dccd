package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Expr is a vectorized scalar expression over one batch.
type Expr interface {
	// DataType is the type of every value Eval returns (a canonical type,
	// see the package doc).
	DataType() arrow.DataType
	// Eval computes the expression for every row of batch. The result has
	// exactly batch.NumRows() elements and is owned by the caller.
	Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error)
	// String renders the expression for EXPLAIN, e.g. "(#0 + 1)".
	String() string
}

// EvalContext carries what expression evaluation needs besides the batch.
type EvalContext struct {
	Ctx context.Context
	Mem memory.Allocator
	// Now is the statement's start time. now(), current_date and
	// current_timestamp return it, so they are stable within a statement,
	// as in Postgres.
	Now time.Time
}

// NewEvalContext returns an EvalContext with the default allocator and the
// current time.
func NewEvalContext(ctx context.Context) *EvalContext {
	return &EvalContext{Ctx: ctx, Mem: memory.DefaultAllocator, Now: time.Now()}
}

// Column reads column Index of the input batch.
type Column struct {
	Index int
	Type  arrow.DataType
	// Name is for EXPLAIN only.
	Name string
}

var _ Expr = (*Column)(nil)

func (c *Column) DataType() arrow.DataType { return c.Type }

func (c *Column) Eval(_ *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	if c.Index < 0 || int64(c.Index) >= batch.NumCols() {
		return nil, fmt.Errorf("exec: column #%d out of range for a batch of %d columns (planner bug)", c.Index, batch.NumCols())
	}
	col := batch.Column(c.Index)
	if !arrow.TypeEqual(col.DataType(), c.Type) {
		return nil, fmt.Errorf("exec: column #%d is %s, expected %s (planner bug)", c.Index, col.DataType(), c.Type)
	}
	col.Retain()
	return col, nil
}

func (c *Column) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("#%d", c.Index)
}

// Literal is a constant. A NULL of any type is a Literal whose Value is
// not valid (scalar.MakeNullScalar(type)).
type Literal struct {
	Value scalar.Scalar
	// Probe, when set, is told each type an implicit or explicit cast
	// gives the literal. The planner describes a statement's parameters
	// ($n) with it before their values are known: each stands in as a
	// probed NULL, and its context's cast names its type.
	Probe func(arrow.DataType)
}

var _ Expr = (*Literal)(nil)

func (l *Literal) DataType() arrow.DataType { return l.Value.DataType() }

func (l *Literal) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	return scalarArray(l.Value, int(batch.NumRows()), ec.Mem)
}

// scalarArray repeats s n times. arrow-go cannot build an extension array
// (UUID) from a scalar, so that one is built from its storage.
func scalarArray(s scalar.Scalar, n int, mem memory.Allocator) (arrow.Array, error) {
	ext, ok := s.(*scalar.Extension)
	if !ok {
		return scalar.MakeArrayFromScalar(s, n, mem)
	}
	et := ext.Type.(arrow.ExtensionType)
	var storage arrow.Array
	if ext.Valid && ext.Value != nil {
		var err error
		if storage, err = scalar.MakeArrayFromScalar(ext.Value, n, mem); err != nil {
			return nil, err
		}
	} else {
		storage = array.MakeArrayOfNull(mem, et.StorageType(), n)
	}
	defer storage.Release()
	return array.NewExtensionArrayWithStorage(et, storage), nil
}

func (l *Literal) String() string {
	if !l.Value.IsValid() {
		return "NULL"
	}
	if l.Value.DataType().ID() == arrow.STRING {
		return fmt.Sprintf("'%s'", l.Value.String())
	}
	return l.Value.String()
}

// SortKey orders rows by an expression.
type SortKey struct {
	Expr       Expr
	Descending bool
	// NullsFirst follows Postgres's default when the user wrote nothing:
	// NULLS LAST for ASC, NULLS FIRST for DESC. The planner fills it in.
	NullsFirst bool
}

func (k SortKey) String() string { return k.Expr.String() + OrderSuffix(k.Descending, k.NullsFirst) }

// OrderSuffix renders a sort direction for EXPLAIN: " DESC" when
// descending, then the NULLS placement, always spelled out.
func OrderSuffix(desc, nullsFirst bool) string {
	s := ""
	if desc {
		s = " DESC"
	}
	if nullsFirst {
		return s + " NULLS FIRST"
	}
	return s + " NULLS LAST"
}

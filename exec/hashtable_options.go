package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// HashOptions configure the hash-based operators (HashJoin,
// NestedLoopJoin, HashAggregate, Distinct, SetOp). The zero value is
// usable: default allocator, no budget, build on the right.
type HashOptions struct {
	// Mem allocates output batches; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Budget bounds what the operator holds (build sides, aggregate state,
	// seen keys); nil means unlimited.
	Budget *Budget
	// BuildLeft makes a join build its hash table (or materialize, for a
	// nested loop join) on the left input and stream the right one. Joins
	// only; the default builds the right input.
	BuildLeft bool
	// NullSafeKeys makes a hash join's NULL keys match each other, as IS
	// NOT DISTINCT FROM does (the join of a decorrelated subquery to the
	// outer rows' correlated values). Inner, left and mark joins only.
	NullSafeKeys bool
	// BatchSize caps the rows of an output batch; 0 means 8192.
	BatchSize int
	// Now is the statement start time handed to expressions; zero means
	// the time of Open.
	Now time.Time
	// SpillDir is where HashAggregate spills partitions when the Budget
	// runs out; "" is the system temp dir.
	SpillDir string
	// DisableSpill makes an exhausted budget an error in HashAggregate
	// instead of a spill.
	DisableSpill bool
	// KeyRanges, when set, is asked by BuildJoin, once the build side is
	// drained, for a range per key (nil where none is known) holding
	// every value of that key the probe side can bring; rows is the
	// number of build rows. A build row whose key value lies outside its
	// range can join nothing: it is left out of the table, as a row with
	// a NULL key is, and so is among the unmatched rows
	// (JoinBuild.OutOfRange counts them). Not for null-aware anti joins.
	KeyRanges func(rows int) ([]*KeyRange, error)
}

func (o HashOptions) withDefaults() HashOptions {
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 8192
	}
	return o
}

func (o HashOptions) evalContext(ctx context.Context) *EvalContext {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &EvalContext{Ctx: ctx, Mem: o.Mem, Now: now}
}

// htReservation tracks what one operator reserved in a Budget, so that Close
// gives back exactly that.
type htReservation struct {
	budget *Budget
	what   string
	n      int64
}

// setTo grows (or shrinks) the htReservation to n bytes.
func (r *htReservation) setTo(n int64) error {
	if n > r.n {
		if err := r.budget.Reserve(n-r.n, r.what); err != nil {
			return err
		}
	} else if n < r.n {
		r.budget.Release(r.n - n)
	}
	r.n = n
	return nil
}

// force sets the reservation to n even past the budget's limit: for memory
// already held, which the budget must count so that later claims see it.
func (r *htReservation) force(n int64) {
	r.budget.force(n - r.n)
	r.n = n
}

func (r *htReservation) add(n int64) error { return r.setTo(r.n + n) }

func (r *htReservation) release() {
	r.budget.Release(r.n)
	r.n = 0
}

// htEvalExprs evaluates exprs on batch; on error nothing is leaked.
func htEvalExprs(ec *EvalContext, exprs []Expr, batch arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(exprs))
	for i, e := range exprs {
		a, err := e.Eval(ec, batch)
		if err != nil {
			htReleaseArrays(out)
			return nil, err
		}
		if a.Len() != int(batch.NumRows()) {
			a.Release()
			htReleaseArrays(out)
			return nil, fmt.Errorf("exec: %s returned %d rows for a batch of %d (bug)", e, a.Len(), batch.NumRows())
		}
		out[i] = a
	}
	return out, nil
}

func htReleaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

func htReleaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

func htExprTypes(exprs []Expr) []arrow.DataType {
	ts := make([]arrow.DataType, len(exprs))
	for i, e := range exprs {
		ts[i] = e.DataType()
	}
	return ts
}

func htExprList(exprs []Expr) string {
	s := "["
	for i, e := range exprs {
		if i > 0 {
			s += ", "
		}
		s += e.String()
	}
	return s + "]"
}

// htIndexArray views idx as an Int32 array without copying. The array must
// be released before idx is modified.
func htIndexArray(idx []int32) arrow.Array {
	buf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))
	d := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// htTakeColumns gathers rows idx of every column.
func htTakeColumns(cctx context.Context, cols []arrow.Array, idx []int32) ([]arrow.Array, error) {
	ia := htIndexArray(idx)
	defer ia.Release()
	return htTakeColumnsArr(cctx, cols, ia)
}

// htTakeColumnsArr gathers rows of every column by an index array, which
// may hold NULLs (they gather NULLs).
func htTakeColumnsArr(cctx context.Context, cols []arrow.Array, ia arrow.Array) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		var t arrow.Array
		var err error
		if c.DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			// arrow-go's take has no kernel for 16-byte values
			t, err = takeArray(memory.DefaultAllocator, c, htIndices(ia))
		} else {
			t, err = compute.TakeArray(cctx, c, ia)
		}
		if err != nil {
			htReleaseArrays(out)
			return nil, fmt.Errorf("exec: gather %s: %w", c.DataType(), err)
		}
		out[i] = t
	}
	return out, nil
}

// htIndices is an index array as takeArray takes it: -1 for a NULL.
func htIndices(ia arrow.Array) []int32 {
	vals := ia.(*array.Int32).Int32Values()
	idx := make([]int32, len(vals))
	for i, v := range vals {
		if ia.IsNull(i) {
			v = -1
		}
		idx[i] = v
	}
	return idx
}

// htNullColumns returns all-NULL columns of the given fields' types.
func htNullColumns(mem memory.Allocator, fields []arrow.Field, n int) []arrow.Array {
	out := make([]arrow.Array, len(fields))
	for i, f := range fields {
		out[i] = array.MakeArrayOfNull(mem, f.Type, n)
	}
	return out
}

// htConcatBatches concatenates batches of schema into one column per field
// and releases the batches (setting them to nil). It concatenates column
// by column, releasing each column's parts as it goes, so that the peak is
// the input plus one concatenated column, not twice the input.
func htConcatBatches(mem memory.Allocator, schema *arrow.Schema, batches []arrow.RecordBatch) ([]arrow.Array, error) {
	parts := make([][]arrow.Array, schema.NumFields())
	for i := range parts {
		parts[i] = make([]arrow.Array, len(batches))
		for j, b := range batches {
			parts[i][j] = b.Column(i)
			parts[i][j].Retain()
		}
	}
	for j, b := range batches {
		b.Release()
		batches[j] = nil
	}
	out := make([]arrow.Array, schema.NumFields())
	var err error
	for i, f := range schema.Fields() {
		switch {
		case err != nil:
		case len(parts[i]) == 0:
			out[i] = array.MakeArrayOfNull(mem, f.Type, 0)
		case len(parts[i]) == 1:
			out[i] = parts[i][0]
			out[i].Retain()
		default:
			var c arrow.Array
			if c, err = array.Concatenate(parts[i], mem); err != nil {
				err = fmt.Errorf("exec: concatenate %s: %w", f.Name, err)
			} else {
				out[i] = c
			}
		}
		htReleaseArrays(parts[i])
	}
	if err != nil {
		htReleaseArrays(out)
		return nil, err
	}
	return out, nil
}

// htNewBatch assembles a batch from columns it takes ownership of.
// htNewRows appends to dst the rows whose ids are new from before on,
// after HashTable.FindOrInsertRows gave ids: it numbers new keys in row
// order, so the first row of each new id is the one where the count of
// new ids so far reaches it.
func htNewRows(dst, ids []int32, before int32) []int32 {
	next := before
	for r, id := range ids {
		if id == next {
			dst = append(dst, int32(r))
			next++
		}
	}
	return dst
}

func htNewBatch(schema *arrow.Schema, cols []arrow.Array, n int) arrow.RecordBatch {
	b := array.NewRecordBatch(schema, cols, int64(n))
	htReleaseArrays(cols)
	return b
}

// htNullableFields returns fields with Nullable set.
func htNullableFields(fs []arrow.Field) []arrow.Field {
	out := make([]arrow.Field, len(fs))
	for i, f := range fs {
		f.Nullable = true
		out[i] = f
	}
	return out
}

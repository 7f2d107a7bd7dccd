package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
// list is DuckDB's name for array_agg.
var AggregateNames = []string{"any_value", "array_agg", "avg", "bool_and", "bool_or", "count", "list", "max", "min", "string_agg", "sum"}

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
	case "array_agg", "list":
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
// their String(). Output starts after the input ends.
//
// Memory: the whole state (hash table, group keys, aggregate state) is
// reserved in the Budget, and before each input batch so is the most that
// batch can add (every row a new group, the hash table doubling, the state
// arrays growing). When that reservation fails, the aggregate spills (see
// haSpill): the groups it holds stay in memory and keep aggregating their
// rows, and the rows of every other group go to one of haFanOut partition
// files by their key's hash. Each partition is aggregated afterwards by
// its own HashAggregate, which can spill again on further bits of the
// hash. Every group is aggregated whole by exactly one aggregate, so every
// aggregate kind spills, order-sensitive ones included (a partition keeps
// its rows in input order). Groups come out in order of first appearance
// when nothing spilled; after a spill, the in-memory groups come first,
// then each partition's. State that grows with the rows of one group
// (DISTINCT, string_agg, array_agg, min/max of text) still counts against
// the budget and fails the statement when the groups kept in memory
// outgrow it.
type HashAggregate struct {
	input   Operator
	groupBy []Expr
	aggs    []*Aggregate
	// dictDistinct is the input column (SetDictDistinct) that may come as
	// dictionary arrays for count(DISTINCT) alone; -1 for none
	dictDistinct int
	opts         HashOptions
	schema       *arrow.Schema
	metrics      Metrics
	level        int // 0; one more for each spill a partition's aggregate is

	enc       *KeyEncoder
	table     *HashTable
	states    []htAggState
	dists     []*htDistinct // per aggregate, nil unless DISTINCT
	keyCh     [][]arrow.Array
	keyStart  []int // group id of the first row of each keyCh chunk
	keyB      int64
	groups    int
	capGroups int // the states are sized for this many groups
	res       htReservation
	cctx      context.Context
	ec        *EvalContext

	spill *haSpill // non-nil once the budget ran out

	// dicts map the entries of the dictionaries the group key last came
	// with to their groups, the latest first; nullKey is the NULL key
	// encoded (aggregate_dict.go)
	dicts   []*haDict
	nullKey *RowKeys

	// intMap maps the values of one integer group key to their groups
	// (aggregate_intkey.go)
	intMap haIntMap

	// pack packs several integer group keys into one for a direct map
	// (aggregate_packed.go)
	pack haPack

	// the group keys that may be coded, until a batch starts coding them
	// (or the aggregate gives up); then the coded ones (nil for a key not
	// coded) (aggregate_coded.go)
	codable []int
	coded   []*haCoded

	// Output: the finished aggregate columns of the in-memory groups and
	// the next group to emit, then the spilled partitions one by one.
	outCols []arrow.Array
	off     int
	chunk   int // the keyCh chunk holding group off
	parts   []haPartition
	child   *HashAggregate

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
		schema: arrow.NewSchema(fields, nil), dictDistinct: -1}
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

// SetDictDistinct lets input column col come as dictionary arrays of
// strings (TableScan.SetDictionary), for an aggregate without GROUP BY
// whose only reader of it is count(DISTINCT col) (bare, without FILTER):
// its DISTINCT table then takes each dictionary entry once a batch
// (htDistinct.filterDict). A batch whose other columns are dictionaries,
// or an aggregate that groups, decodes them first, as before.
func (h *HashAggregate) SetDictDistinct(col int) { h.dictDistinct = col }

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
			d, err := newHTDistinct(a.Args[0].DataType(), h.enc == nil)
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
		h.resize(1)
	}
	return h.input.Open(ctx)
}

// resize sizes every state for capacity groups.
func (h *HashAggregate) resize(capacity int) {
	for _, s := range h.states {
		s.resize(capacity)
	}
	h.capGroups = capacity
}

// growCap is the state capacity for want groups: at least half again the
// current one, so that growth copies each state O(1) times per group.
func (h *HashAggregate) growCap(want int) int {
	if want <= h.capGroups {
		return h.capGroups
	}
	return max(want, h.capGroups+h.capGroups/2, 1024)
}

func (h *HashAggregate) Close() error {
	var errs []error
	if h.child != nil {
		errs = append(errs, h.child.Close())
		h.child = nil
	}
	h.releaseState()
	htReleaseArrays(h.outCols)
	h.outCols = nil
	for _, ch := range h.keyCh {
		htReleaseArrays(ch)
	}
	h.keyCh, h.keyStart = nil, nil
	h.releaseCoded()
	if h.spill != nil {
		errs = append(errs, h.spill.abort())
		h.spill = nil
	}
	for _, p := range h.parts {
		errs = append(errs, p.remove())
	}
	h.parts = nil
	h.res.release()
	errs = append(errs, h.input.Close())
	return errors.Join(errs...)
}

// releaseState lets go of the hash table and the aggregate states.
func (h *HashAggregate) releaseState() {
	for _, s := range h.states {
		if s != nil {
			s.release()
		}
	}
	h.states, h.dists, h.table = nil, nil, nil
	h.releaseKeyMaps()
}

func (h *HashAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if h.err != nil {
		return nil, h.err
	}
	b, err := h.next(ctx)
	if err != nil && err != io.EOF {
		h.err = err // the state is half updated: fail every later call too
	}
	h.metrics.Add(b, start)
	return b, err
}

func (h *HashAggregate) next(ctx context.Context) (arrow.RecordBatch, error) {
	if !h.done {
		if err := h.consume(ctx); err != nil {
			return nil, err
		}
		h.done = true
	}
	for {
		if h.outCols != nil {
			if h.off < h.groups {
				return h.emit()
			}
			h.dropOutput()
		}
		if h.child != nil {
			b, err := h.child.Next(ctx)
			if err != io.EOF {
				return b, err
			}
			h.addChildMetrics(h.child)
			err = h.child.Close()
			h.child = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		if len(h.parts) == 0 {
			return nil, io.EOF
		}
		p := h.parts[0]
		h.parts = h.parts[1:]
		if err := h.openChild(ctx, p); err != nil {
			return nil, err
		}
	}
}

func (h *HashAggregate) consume(ctx context.Context) error {
	var keys RowKeys
	var ids []int32
	var sel, base []bool
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
		err = h.addBatch(ctx, b, &keys, &ids, &sel, &base)
		b.Release()
		if err != nil {
			return err
		}
	}
	if h.spill != nil {
		parts, err := h.spill.finish()
		h.spill = nil
		h.parts = parts
		if err != nil {
			return err
		}
		h.metrics.Set("spill_partitions", int64(len(parts)))
	}
	return h.finish()
}

// stateBytes is what the aggregate holds now.
func (h *HashAggregate) stateBytes() int64 {
	total := h.keyB
	if h.table != nil {
		total += h.table.Bytes()
	}
	for i, s := range h.states {
		total += s.bytes()
		if h.dists[i] != nil {
			total += h.dists[i].bytes()
		}
	}
	for _, hd := range h.dicts {
		total += hd.bytes()
	}
	total += h.intMap.bytes() + h.codedBytes()
	if h.spill != nil {
		total += haSpillBytes()
	}
	return total
}

// groupBytes is the fixed state of one group, over every aggregate.
func (h *HashAggregate) groupBytes() int64 {
	var n int64
	for _, s := range h.states {
		n += s.groupBytes()
	}
	return n
}

func (h *HashAggregate) addBatch(ctx context.Context, b arrow.RecordBatch, keys *RowKeys, ids *[]int32, sel, base *[]bool) error {
	if h.codable != nil {
		if err := h.startCoded(b); err != nil {
			return err
		}
	}
	if haHasDict(b) && !h.dictForDistinct(b) && h.coded == nil {
		// a group key column that came as a dictionary array
		// (TableScan.SetDictionary)
		if handled, err := h.addDictBatch(b, ids, sel); handled || err != nil {
			return err
		}
		plain, err := h.decodeDicts(b)
		if err != nil {
			return err
		}
		defer plain.Release()
		b = plain
	}
	n := int(b.NumRows())
	*ids = htGrow(*ids, n)
	if h.table == nil {
		clear((*ids)[:n])
		return h.updateAll(b, (*ids)[:n], sel, nil)
	}
	cols, err := h.groupCols(b)
	if err != nil {
		return err
	}
	defer htReleaseArrays(cols)
	if handled, err := h.addIntBatch(b, cols, ids, sel); handled || err != nil {
		return err
	}
	if handled, err := h.addPackedBatch(b, cols, ids, sel); handled || err != nil {
		return err
	}
	if err := h.enc.Encode(cols, keys); err != nil {
		return err
	}
	if h.spill == nil {
		// Reserve the most this batch can add before adding it: every
		// row a new group.
		need := h.stateBytes() + h.table.GrowBytes(n, len(keys.Data)) + ArraysBytes(cols) + h.spillReserve()
		if c := h.growCap(h.groups + n); c > h.capGroups {
			need += int64(c) * h.groupBytes()
		}
		if err := h.res.setTo(need); err != nil {
			if !h.canSpill(err) {
				return err
			}
			if err := h.startSpill(); err != nil {
				return err
			}
		}
	}
	if h.spill != nil {
		if haHasDict(b) {
			// (coded keys) the partitions get the strings
			plain, err := h.decodeDicts(b)
			if err != nil {
				return err
			}
			defer plain.Release()
			b = plain
		}
		return h.spillBatch(ctx, b, keys, (*ids)[:n], sel, base)
	}
	before := int32(h.table.Len())
	if h.table.FindOrInsertRows(keys, *ids, false /* skipNull */) > 0 {
		// their first rows give the new groups' key values
		kc, err := htTakeColumns(h.cctx, cols, htNewRows(nil, (*ids)[:n], before))
		if err != nil {
			return err
		}
		h.addKeys(kc, before)
	}
	return h.updateKept(b, (*ids)[:n], sel)
}

// addKeys records the key values of the groups from before on, new in a
// batch, and sizes the states for them.
func (h *HashAggregate) addKeys(kc []arrow.Array, before int32) {
	h.keyCh = append(h.keyCh, kc)
	h.keyStart = append(h.keyStart, int(before))
	h.keyB += ArraysBytes(kc)
	h.groups = h.table.Len()
	if h.groups > h.capGroups {
		h.resize(h.growCap(h.groups))
	}
}

// updateKept folds a batch whose groups the table holds (ids) into the
// states, and reserves what they hold after.
func (h *HashAggregate) updateKept(b arrow.RecordBatch, ids []int32, sel *[]bool) error {
	if err := h.updateAll(b, ids, sel, nil); err != nil {
		return err
	}
	if err := h.res.setTo(h.stateBytes() + h.spillReserve()); err != nil {
		// Only state that grows per row gets here (the fixed part was
		// reserved above). It is held already: count it, and spill the
		// groups to come.
		if !h.canSpill(err) {
			return err
		}
		h.res.force(h.stateBytes())
		return h.startSpill()
	}
	return nil
}

// spillReserve is the room kept, while nothing has spilled, for spilling
// later: the partition writers' buffers, and a sixteenth of the limit for
// the state of the groups kept in memory to grow into (min/max of text,
// DISTINCT, string_agg and array_agg grow with rows).
func (h *HashAggregate) spillReserve() int64 {
	if h.spill != nil || h.opts.DisableSpill || h.table == nil {
		return 0
	}
	return haSpillBytes() + h.opts.Budget.Limit()/16
}

// updateAll folds the batch's rows into their groups' states; base, when
// non-nil, selects the rows to fold.
func (h *HashAggregate) updateAll(b arrow.RecordBatch, ids []int32, sel *[]bool, base []bool) error {
	for i, a := range h.aggs {
		if err := h.updateAgg(i, a, b, ids, sel, base); err != nil {
			return err
		}
	}
	return nil
}

// canSpill reports whether err, from a reservation, can be answered by
// spilling.
func (h *HashAggregate) canSpill(err error) bool {
	return errors.Is(err, ErrMemoryLimit) && !h.opts.DisableSpill && h.table != nil && h.level < haMaxLevel()
}

func (h *HashAggregate) updateAgg(i int, a *Aggregate, b arrow.RecordBatch, ids []int32, selBuf *[]bool, base []bool) error {
	n := len(ids)
	var sel []bool
	if a.Filter != nil || base != nil || h.dists[i] != nil {
		*selBuf = htGrow(*selBuf, n)
		sel = *selBuf
		if base != nil {
			copy(sel, base[:n])
		} else {
			for r := range sel {
				sel[r] = true
			}
		}
	}
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
		for r := 0; r < n; r++ {
			sel[r] = sel[r] && mb.IsValid(r) && mb.Value(r)
		}
		m.Release()
	}
	var args []arrow.Array
	if h.dictDistinct >= 0 && a.Distinct && len(a.Args) == 1 {
		if col, isCol := a.Args[0].(*Column); isCol && col.Index == h.dictDistinct && col.Index < int(b.NumCols()) {
			if d, isDict := b.Column(col.Index).(*array.Dictionary); isDict {
				// count(DISTINCT col) over its dictionary array
				// (SetDictDistinct), which the column expression
				// would refuse
				d.Retain()
				args = []arrow.Array{d}
			}
		}
	}
	if args == nil {
		var err error
		if args, err = htEvalExprs(h.ec, a.inputs(), b); err != nil {
			return err
		}
	}
	defer htReleaseArrays(args)
	if d := h.dists[i]; d != nil {
		if err := d.filter(ids, args[0], sel); err != nil {
			return err
		}
	}
	if err := h.states[i].update(h.cctx, ids, args, sel); err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	return nil
}

// finish computes the aggregate columns of the groups held in memory. The
// hash table and DISTINCT tables go first, so that the results take the
// place they held.
func (h *HashAggregate) finish() error {
	n := h.groups
	h.table = nil
	h.releaseKeyMaps()
	for i := range h.dists {
		h.dists[i] = nil
	}
	h.res.force(h.stateBytes())
	h.outCols = make([]arrow.Array, 0, len(h.states))
	var outB int64
	for i, s := range h.states {
		col, err := s.finish(h.cctx, n)
		if err != nil {
			return fmt.Errorf("%s: %w", h.aggs[i], err)
		}
		h.outCols = append(h.outCols, col)
		outB += ArrayDataBytes(col.Data())
		s.release()
		h.states[i] = nil
		h.res.force(h.keyB + outB + h.stateBytesFrom(i+1))
	}
	h.states = nil
	if err := h.finishCoded(); err != nil {
		return err
	}
	h.off, h.chunk = 0, 0
	h.metrics.Set("groups", int64(n))
	return nil
}

// stateBytesFrom is what the states from index i on hold.
func (h *HashAggregate) stateBytesFrom(i int) int64 {
	var n int64
	for _, s := range h.states[i:] {
		n += s.bytes()
	}
	return n
}

// emit returns the next batch of in-memory groups: key columns sliced (and,
// across chunks, concatenated) from the kept first rows, aggregate columns
// sliced from the results.
func (h *HashAggregate) emit() (arrow.RecordBatch, error) {
	start, end := h.off, min(h.off+h.opts.BatchSize, h.groups)
	cols := make([]arrow.Array, 0, len(h.schema.Fields()))
	for k := range h.groupBy {
		var parts []arrow.Array
		for c := h.chunk; c < len(h.keyCh) && h.keyStart[c] < end; c++ {
			lo := max(start, h.keyStart[c]) - h.keyStart[c]
			hi := min(end-h.keyStart[c], h.keyCh[c][k].Len())
			parts = append(parts, array.NewSlice(h.keyCh[c][k], int64(lo), int64(hi)))
		}
		var col arrow.Array
		if len(parts) == 1 {
			col = parts[0]
		} else {
			var err error
			col, err = array.Concatenate(parts, h.opts.Mem)
			htReleaseArrays(parts)
			if err != nil {
				htReleaseArrays(cols)
				return nil, fmt.Errorf("hash aggregate: group keys: %w", err)
			}
		}
		col, err := h.decodeKey(k, col)
		if err != nil {
			htReleaseArrays(cols)
			return nil, fmt.Errorf("hash aggregate: group keys: %w", err)
		}
		cols = append(cols, col)
	}
	for _, c := range h.outCols {
		cols = append(cols, array.NewSlice(c, int64(start), int64(end)))
	}
	h.off = end
	for h.chunk < len(h.keyCh) && h.keyStart[h.chunk]+h.keyCh[h.chunk][0].Len() <= end {
		h.chunk++
	}
	return htNewBatch(h.schema, cols, end-start), nil
}

// dropOutput lets go of the in-memory groups once they are emitted, so
// that the spilled partitions have the budget.
func (h *HashAggregate) dropOutput() {
	htReleaseArrays(h.outCols)
	h.outCols = nil
	for _, ch := range h.keyCh {
		htReleaseArrays(ch)
	}
	h.keyCh, h.keyStart, h.keyB = nil, nil, 0
	h.releaseCoded()
	h.res.release()
}

// openChild starts the aggregation of one spilled partition.
func (h *HashAggregate) openChild(ctx context.Context, p haPartition) error {
	src := newHASpillSource(p, h.input.Schema(), h.opts.Mem)
	c, err := NewHashAggregate(src, h.groupBy, h.aggs, h.opts)
	if err != nil {
		p.remove()
		return err
	}
	c.level = h.level + 1
	h.child = c
	return c.Open(ctx)
}

// addChildMetrics adds what a partition's aggregate did to h's counters.
func (h *HashAggregate) addChildMetrics(c *HashAggregate) {
	for k, v := range c.metrics.Extra() {
		h.metrics.Inc(k, v)
	}
}

// dictForDistinct reports whether b's dictionary arrays may stay as they
// are: the aggregate has no GROUP BY, and its one dictionary column is
// the one count(DISTINCT) takes so (SetDictDistinct), of strings with
// Int32 indices.
func (h *HashAggregate) dictForDistinct(b arrow.RecordBatch) bool {
	if h.enc != nil || h.dictDistinct < 0 || h.dictDistinct >= int(b.NumCols()) {
		return false
	}
	for i, c := range b.Columns() {
		d, isDict := c.(*array.Dictionary)
		switch {
		case !isDict:
		case i != h.dictDistinct:
			return false
		case d.Dictionary().DataType().ID() != arrow.STRING:
			return false
		default:
			if _, ok := d.Indices().(*array.Int32); !ok {
				return false
			}
		}
	}
	return true
}

// htDistinct passes each (group, value) pair through once.
//
// An aggregate without GROUP BY (every row in group 0) over an integer
// argument keeps the values of one range of 2^23 in a bitmap instead
// (distinctBits): one bit test a row, where the hash table encodes,
// hashes and probes each. The range starts at the smallest value of the
// first batch that has one and never moves, so each value is kept in
// exactly one of the two: those outside it go to the hash table.
type htDistinct struct {
	enc   *KeyEncoder
	table *HashTable
	keys  RowKeys
	bits  *distinctBits
}

// distinctBits is htDistinct's bitmap of the integer values from lo on.
type distinctBits struct {
	set      bool // lo is chosen
	lo       int64
	words    []uint64
	nullSeen bool
	rest     []int // scratch: the rows the bitmap does not take
}

// distinctSpan is how many values from lo the bitmap covers (1 MiB of
// bits when all are used; it grows as values come).
const distinctSpan = 1 << 23

func (d *htDistinct) bytes() int64 {
	n := d.table.Bytes()
	if d.bits != nil {
		n += int64(cap(d.bits.words)) * 8
	}
	return n
}

// newHTDistinct is the DISTINCT filter of an argument of type t; global:
// the aggregate has no GROUP BY (its bitmap may then apply).
func newHTDistinct(t arrow.DataType, global bool) (*htDistinct, error) {
	enc, err := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int32, t})
	if err != nil {
		return nil, err
	}
	d := &htDistinct{enc: enc, table: NewHashTable(enc.Width(), 0)}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		if global {
			d.bits = &distinctBits{}
		}
	}
	return d, nil
}

// filter clears sel[r] for rows whose (group, value) was seen before.
func (d *htDistinct) filter(ids []int32, vals arrow.Array, sel []bool) error {
	if dict, ok := vals.(*array.Dictionary); ok {
		return d.filterDict(ids, dict, sel)
	}
	rest, all, err := d.filterBits(ids, vals, sel)
	if err != nil || all {
		return err
	}
	ga := htIndexArray(ids)
	err = d.enc.Encode([]arrow.Array{ga, vals}, &d.keys)
	ga.Release()
	if err != nil {
		return err
	}
	if rest != nil {
		for _, r := range rest {
			_, isNew := d.table.FindOrInsert(d.keys.Key(r), d.keys.Hashes[r])
			sel[r] = isNew
		}
		return nil
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

// filterDict is filter for a dictionary array of strings with Int32
// indices, every row in group 0 (HashAggregate.dictForDistinct): each
// dictionary entry the batch's selected rows use is looked up in the
// table once, and only its first row can pass. NULL goes through the
// table too, as the usual way takes it.
func (d *htDistinct) filterDict(ids []int32, dict *array.Dictionary, sel []bool) error {
	idx, ok := dict.Indices().(*array.Int32)
	if !ok {
		return fmt.Errorf("hash aggregate: DISTINCT of dictionary indices %s (bug)", dict.Indices().DataType())
	}
	for _, g := range ids {
		if g != 0 {
			return fmt.Errorf("hash aggregate: DISTINCT of a dictionary array in a grouped aggregate (bug)")
		}
	}
	values := dict.Dictionary()
	n := values.Len()
	// first[k]: the first selected row of entry k in the batch, +1;
	// every selected row is cleared, and the first of each entry (and of
	// NULL) set again where the table has not seen it
	first := make([]int32, n)
	vs := idx.Int32Values()
	nullRow := -1
	for r, k := range vs {
		if !sel[r] {
			continue
		}
		sel[r] = false
		if idx.IsNull(r) {
			if nullRow < 0 {
				nullRow = r
			}
			continue
		}
		if k < 0 || int(k) >= n {
			return fmt.Errorf("hash aggregate: dictionary index %d of a dictionary of %d (bug)", k, n)
		}
		if first[k] == 0 {
			first[k] = int32(r) + 1
		}
	}
	// the entries used, and NULL, looked up as the usual way would
	var rows []int
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	defer ib.Release()
	for k, f := range first {
		if f != 0 {
			rows = append(rows, int(f-1))
			ib.Append(int32(k))
		}
	}
	if nullRow >= 0 {
		rows = append(rows, nullRow)
		ib.AppendNull()
	}
	if len(rows) == 0 {
		return nil
	}
	at := ib.NewInt32Array()
	defer at.Release()
	strs, err := compute.TakeArray(context.Background(), values, at)
	if err != nil {
		return err
	}
	defer strs.Release()
	gids := make([]int32, len(rows))
	ga := htIndexArray(gids)
	err = d.enc.Encode([]arrow.Array{ga, strs}, &d.keys)
	ga.Release()
	if err != nil {
		return err
	}
	for j, r := range rows {
		_, isNew := d.table.FindOrInsert(d.keys.Key(j), d.keys.Hashes[j])
		sel[r] = isNew
	}
	return nil
}

// filterBits passes the selected rows through the bitmap where it
// applies (see htDistinct): all is true when it settled every row; else
// rest, when not nil, are the selected rows left to the hash table (the
// others are settled). rest is nil, and nothing settled, where the
// bitmap does not apply: a GROUP BY's aggregate, or an argument of
// another type. A batch of the bitmap's aggregate must go through it,
// or a value could be kept in both: any other form is an error.
func (d *htDistinct) filterBits(ids []int32, vals arrow.Array, sel []bool) (rest []int, all bool, err error) {
	if d.bits == nil {
		return nil, false, nil
	}
	if vals.Len() != len(sel) {
		return nil, false, fmt.Errorf("hash aggregate: DISTINCT of %d values for %d rows (bug)", vals.Len(), len(sel))
	}
	switch vals.DataType().ID() {
	case arrow.INT8:
		rest, all = distinctBitsOf(d.bits, htFixedValues[int8](vals), vals, sel)
	case arrow.INT16:
		rest, all = distinctBitsOf(d.bits, htFixedValues[int16](vals), vals, sel)
	case arrow.INT32:
		rest, all = distinctBitsOf(d.bits, htFixedValues[int32](vals), vals, sel)
	case arrow.INT64:
		rest, all = distinctBitsOf(d.bits, htFixedValues[int64](vals), vals, sel)
	default:
		return nil, false, fmt.Errorf("hash aggregate: DISTINCT of %s where integers were planned (bug)", vals.DataType())
	}
	return rest, all, nil
}

// distinctBitsOf is filterBits over vs, vals' values (nil where vals has
// no values buffer: then all of them are NULL).
func distinctBitsOf[T int8 | int16 | int32 | int64](b *distinctBits, vs []T, vals arrow.Array, sel []bool) ([]int, bool) {
	if len(vs) != len(sel) {
		// no values: every row NULL
		for r := range sel {
			if sel[r] {
				sel[r] = !b.nullSeen
				b.nullSeen = true
			}
		}
		return nil, true
	}
	nulls := vals.NullN() > 0
	if !b.set {
		for r, v := range vs {
			if sel[r] && (!nulls || vals.IsValid(r)) && (!b.set || int64(v) < b.lo) {
				b.lo, b.set = int64(v), true
			}
		}
	}
	b.rest = b.rest[:0]
	for r, v := range vs {
		if !sel[r] {
			continue
		}
		if nulls && vals.IsNull(r) {
			sel[r] = !b.nullSeen
			b.nullSeen = true
			continue
		}
		o := uint64(int64(v)) - uint64(b.lo) // values below lo wrap high
		if o >= distinctSpan {
			b.rest = append(b.rest, r)
			continue
		}
		w := int(o >> 6)
		if w >= len(b.words) {
			b.words = append(b.words, make([]uint64, max(w+1, 2*len(b.words))-len(b.words))...)
		}
		m := uint64(1) << (o & 63)
		sel[r] = b.words[w]&m == 0
		b.words[w] |= m
	}
	if len(b.rest) == 0 {
		return nil, true
	}
	return b.rest, false
}

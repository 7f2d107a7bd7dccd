package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

var winTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func winTestCol(i int) *Column {
	return &Column{Index: i, Type: winTestSchema.Field(i).Type, Name: winTestSchema.Field(i).Name}
}

func winTestRows(rng *rand.Rand, n int) [][]any {
	rows := make([][]any, n)
	maybe := func(v any) any {
		if rng.IntN(7) == 0 {
			return nil
		}
		return v
	}
	for i := range rows {
		rows[i] = []any{int64(i), maybe(int64(rng.IntN(3))), maybe(int64(rng.IntN(12))),
			maybe(int32(rng.IntN(200) - 100)), maybe(fmt.Sprint("s", rng.IntN(30))), maybe(float64(rng.IntN(50)))}
	}
	return rows
}

// winTestOracle computes f for every row the slow, obvious way: partition
// by equality, sort each partition stably, and scan frames row by row.
func winTestOracle(rows [][]any, f *WindowFunc) []any {
	val := func(e Expr, row []any) any {
		switch e := e.(type) {
		case *Column:
			return row[e.Index]
		case *Literal:
			if !e.Value.IsValid() {
				return nil
			}
			switch v := e.Value.(type) {
			case *scalar.Int64:
				return v.Value
			case *scalar.Int32:
				return int64(v.Value)
			case *scalar.String:
				return v.String()
			}
		}
		panic(fmt.Sprintf("oracle: %T", e))
	}
	parts := map[string][][]any{}
	var partOrder []string
	for _, r := range rows {
		var k []any
		for _, p := range f.PartitionBy {
			k = append(k, val(p, r))
		}
		key := fmt.Sprint(k)
		if _, ok := parts[key]; !ok {
			partOrder = append(partOrder, key)
		}
		parts[key] = append(parts[key], r)
	}
	cmpOrder := func(a, b []any) int {
		for _, k := range f.OrderBy {
			if c := sortTestOracleCmp(val(k.Expr, a), val(k.Expr, b), k.Descending, k.NullsFirst); c != 0 {
				return c
			}
		}
		return 0
	}
	out := make([]any, len(rows))
	for _, key := range partOrder {
		part := parts[key]
		slices.SortStableFunc(part, cmpOrder)
		for i, cur := range part {
			id := cur[0].(int64)
			lo, hi := winTestOracleFrame(f, part, i, cmpOrder, val)
			frame := part[lo:max(lo, hi)]
			if f.Frame != nil && f.Frame.Exclude != ExcludeNoOthers {
				// the rows EXCLUDE keeps, by definition
				var kept [][]any
				for j := lo; j < hi; j++ {
					peer := cmpOrder(part[j], cur) == 0
					switch {
					case f.Frame.Exclude == ExcludeCurrentRow && j == i,
						f.Frame.Exclude == ExcludeGroup && peer,
						f.Frame.Exclude == ExcludeTies && peer && j != i:
						continue
					}
					kept = append(kept, part[j])
				}
				frame = kept
			}
			var arg func(r []any) any
			if len(f.Args) > 0 {
				arg = func(r []any) any { return val(f.Args[0], r) }
			}
			switch f.Name {
			case "row_number":
				out[id] = int64(i + 1)
			case "rank", "dense_rank":
				rank, dense := int64(1), int64(1)
				for j := 0; j < i; j++ {
					if cmpOrder(part[j], cur) < 0 {
						rank++
						if j == 0 || cmpOrder(part[j-1], part[j]) != 0 {
							dense++
						}
					}
				}
				if f.Name == "rank" {
					out[id] = rank
				} else {
					out[id] = dense
				}
			case "percent_rank", "cume_dist":
				before, peersAndBefore := 0, 0
				for _, r := range part {
					c := cmpOrder(r, cur)
					if c < 0 {
						before++
					}
					if c <= 0 {
						peersAndBefore++
					}
				}
				if f.Name == "cume_dist" {
					out[id] = float64(peersAndBefore) / float64(len(part))
				} else if len(part) > 1 {
					out[id] = float64(before) / float64(len(part)-1)
				} else {
					out[id] = 0.0
				}
			case "ntile":
				k := int(val(f.Args[0], part[0]).(int64))
				bucket, left := 1, len(part)/k
				if len(part)%k > 0 {
					left++
				}
				for j := 0; j < i; j++ {
					if left--; left == 0 {
						bucket++
						left = len(part) / k
						if bucket <= len(part)%k {
							left++
						}
					}
				}
				out[id] = int64(bucket)
			case "nth_value":
				if k := val(f.Args[1], cur).(int64); int(k) <= len(frame) {
					out[id] = arg(frame[k-1])
				}
			case "lag", "lead":
				off := int64(1)
				if len(f.Args) > 1 {
					v := val(f.Args[1], cur)
					if v == nil {
						out[id] = nil
						continue
					}
					off = v.(int64)
				}
				if f.Name == "lag" {
					off = -off
				}
				if j := int64(i) + off; j >= 0 && j < int64(len(part)) {
					out[id] = arg(part[j])
				} else if len(f.Args) > 2 {
					out[id] = val(f.Args[2], cur)
				}
			case "first_value":
				if len(frame) > 0 {
					out[id] = arg(frame[0])
				}
			case "last_value":
				if len(frame) > 0 {
					out[id] = arg(frame[len(frame)-1])
				}
			case "count":
				n := int64(0)
				for _, r := range frame {
					if arg == nil || arg(r) != nil {
						n++
					}
				}
				out[id] = n
			case "sum", "avg", "min", "max":
				var vals []float64
				for _, r := range frame {
					switch v := arg(r).(type) {
					case int32:
						vals = append(vals, float64(v))
					case int64:
						vals = append(vals, float64(v))
					case float64:
						vals = append(vals, v)
					}
				}
				if len(vals) == 0 {
					continue
				}
				var res float64
				switch f.Name {
				case "sum", "avg":
					for _, v := range vals {
						res += v
					}
					if f.Name == "avg" {
						res /= float64(len(vals))
					}
				case "min":
					res = slices.Min(vals)
				case "max":
					res = slices.Max(vals)
				}
				if f.typ.ID() == arrow.FLOAT64 {
					out[id] = res
				} else {
					out[id] = int64(res)
				}
			}
		}
	}
	return out
}

// winTestOracleFrame scans for the frame of row i of a sorted partition,
// as Postgres's nodeWindowAgg does for RANGE offsets.
func winTestOracleFrame(f *WindowFunc, part [][]any, i int, cmpOrder func(a, b []any) int, val func(Expr, []any) any) (int, int) {
	fr := f.Frame
	if fr == nil {
		if len(f.OrderBy) == 0 {
			return 0, len(part)
		}
		fr = &Frame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
	}
	peerLo, peerHi := i, i+1
	for peerLo > 0 && cmpOrder(part[peerLo-1], part[i]) == 0 {
		peerLo--
	}
	for peerHi < len(part) && cmpOrder(part[peerHi], part[i]) == 0 {
		peerHi++
	}
	offset := func(b FrameBound) int64 { n, _ := winScalarInt(b.Offset); return n }
	// rangeScan returns the first position (from 0) whose key is not
	// "before" target, NULLs placed as the sort places them.
	rangeScan := func(target int64, inclusive bool) int {
		k := f.OrderBy[0]
		for j := range part {
			v := val(k.Expr, part[j])
			if v == nil {
				if k.NullsFirst {
					continue
				}
				return j
			}
			c := sortTestOracleCmp(v, target, k.Descending, false)
			if c > 0 || (c == 0 && !inclusive) {
				return j
			}
		}
		return len(part)
	}
	// GROUPS: the peer groups of the partition, by their first row
	var groupStarts []int
	group := 0
	for j := range part {
		if j == 0 || cmpOrder(part[j-1], part[j]) != 0 {
			groupStarts = append(groupStarts, j)
		}
		if j == i {
			group = len(groupStarts) - 1
		}
	}
	groupEnd := func(g int) int {
		if g+1 < len(groupStarts) {
			return groupStarts[g+1]
		}
		return len(part)
	}
	bound := func(b FrameBound, isEnd bool) int {
		if fr.Unit == FrameGroups && (b.Kind == OffsetPreceding || b.Kind == OffsetFollowing) {
			g := group + int(offset(b))
			if b.Kind == OffsetPreceding {
				g = group - int(offset(b))
			}
			switch {
			case g < 0:
				return 0
			case g >= len(groupStarts):
				return len(part)
			case isEnd:
				return groupEnd(g)
			}
			return groupStarts[g]
		}
		switch b.Kind {
		case UnboundedPreceding:
			return 0
		case UnboundedFollowing:
			return len(part)
		case CurrentRow:
			if fr.Unit == FrameRows {
				if isEnd {
					return i + 1
				}
				return i
			}
			if isEnd {
				return peerHi
			}
			return peerLo
		}
		n := offset(b)
		if b.Kind == OffsetPreceding {
			n = -n
		}
		if fr.Unit == FrameRows {
			p := i + int(n)
			if isEnd {
				p++
			}
			return min(max(p, 0), len(part))
		}
		cur := val(f.OrderBy[0].Expr, part[i])
		if cur == nil {
			if isEnd {
				return peerHi
			}
			return peerLo
		}
		if f.OrderBy[0].Descending {
			n = -n
		}
		return rangeScan(cur.(int64)+n, isEnd)
	}
	return bound(fr.Start, false), bound(fr.End, true)
}

func winTestFrames() []*Frame {
	b := func(k FrameBoundKind, n int64) FrameBound {
		if k == OffsetPreceding || k == OffsetFollowing {
			return FrameBound{Kind: k, Offset: scalar.NewInt64Scalar(n)}
		}
		return FrameBound{Kind: k}
	}
	return []*Frame{
		nil,
		{FrameRows, b(UnboundedPreceding, 0), b(CurrentRow, 0), ExcludeNoOthers},
		{FrameRows, b(OffsetPreceding, 2), b(OffsetFollowing, 1), ExcludeNoOthers},
		{FrameRows, b(OffsetFollowing, 1), b(OffsetFollowing, 3), ExcludeNoOthers},
		{FrameRows, b(OffsetPreceding, 3), b(OffsetPreceding, 1), ExcludeNoOthers},
		{FrameRows, b(CurrentRow, 0), b(UnboundedFollowing, 0), ExcludeNoOthers},
		{FrameRows, b(UnboundedPreceding, 0), b(UnboundedFollowing, 0), ExcludeNoOthers},
		{FrameRows, b(OffsetPreceding, 0), b(OffsetFollowing, 0), ExcludeNoOthers},
		{FrameRange, b(UnboundedPreceding, 0), b(CurrentRow, 0), ExcludeNoOthers},
		{FrameRange, b(CurrentRow, 0), b(UnboundedFollowing, 0), ExcludeNoOthers},
		{FrameRange, b(CurrentRow, 0), b(CurrentRow, 0), ExcludeNoOthers},
		{FrameRange, b(OffsetPreceding, 2), b(OffsetFollowing, 1), ExcludeNoOthers},
		{FrameRange, b(OffsetFollowing, 1), b(UnboundedFollowing, 0), ExcludeNoOthers},
		{FrameRange, b(UnboundedPreceding, 0), b(OffsetPreceding, 1), ExcludeNoOthers},
		{FrameRange, b(OffsetPreceding, 3), b(CurrentRow, 0), ExcludeNoOthers},
		{FrameRange, b(OffsetFollowing, 0), b(OffsetFollowing, 4), ExcludeNoOthers},
		{FrameGroups, b(OffsetPreceding, 1), b(CurrentRow, 0), ExcludeNoOthers},
		{FrameGroups, b(OffsetPreceding, 2), b(OffsetFollowing, 1), ExcludeNoOthers},
		{FrameGroups, b(OffsetFollowing, 1), b(UnboundedFollowing, 0), ExcludeNoOthers},
		{FrameGroups, b(OffsetPreceding, 3), b(OffsetPreceding, 1), ExcludeNoOthers},
		{FrameGroups, b(CurrentRow, 0), b(OffsetFollowing, 0), ExcludeNoOthers},
		{FrameRows, b(OffsetPreceding, 2), b(OffsetFollowing, 2), ExcludeCurrentRow},
		{FrameRows, b(UnboundedPreceding, 0), b(UnboundedFollowing, 0), ExcludeTies},
		{FrameRange, b(UnboundedPreceding, 0), b(CurrentRow, 0), ExcludeGroup},
		{FrameRange, b(OffsetPreceding, 2), b(OffsetFollowing, 1), ExcludeTies},
		{FrameGroups, b(OffsetPreceding, 1), b(OffsetFollowing, 1), ExcludeGroup},
		{FrameGroups, b(UnboundedPreceding, 0), b(CurrentRow, 0), ExcludeCurrentRow},
	}
}

// TestWindowRandom checks every function against the oracle over random
// data, partitions, orders and frames.
func TestWindowRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	frames := winTestFrames()
	type call struct {
		name string
		args []Expr
	}
	calls := []call{
		{"row_number", nil}, {"rank", nil}, {"dense_rank", nil},
		{"lag", []Expr{winTestCol(3)}}, {"lead", []Expr{winTestCol(4)}},
		{"lag", []Expr{winTestCol(3), &Literal{Value: scalar.NewInt64Scalar(2)}, &Literal{Value: scalar.NewInt32Scalar(-1)}}},
		{"lead", []Expr{winTestCol(4), winTestCol(1), &Literal{Value: scalar.NewStringScalar("dflt")}}},
		{"lag", []Expr{winTestCol(3), &Literal{Value: scalar.NewInt64Scalar(0)}}},
		{"first_value", []Expr{winTestCol(4)}}, {"last_value", []Expr{winTestCol(3)}},
		{"count", nil}, {"count", []Expr{winTestCol(3)}},
		{"sum", []Expr{winTestCol(3)}}, {"avg", []Expr{winTestCol(3)}}, {"sum", []Expr{winTestCol(5)}},
		{"min", []Expr{winTestCol(3)}}, {"max", []Expr{winTestCol(3)}}, {"max", []Expr{winTestCol(5)}},
		{"percent_rank", nil}, {"cume_dist", nil},
		{"ntile", []Expr{&Literal{Value: scalar.NewInt64Scalar(3)}}}, {"ntile", []Expr{&Literal{Value: scalar.NewInt32Scalar(7)}}},
		{"nth_value", []Expr{winTestCol(4), &Literal{Value: scalar.NewInt64Scalar(2)}}},
	}
	for iter := range 40 {
		n := rng.IntN(400)
		rows := winTestRows(rng, n)
		var part []Expr
		if rng.IntN(3) != 0 {
			part = []Expr{winTestCol(1)}
		}
		frame := frames[rng.IntN(len(frames))]
		var order []SortKey
		rangeOffset := frame != nil && frame.Unit == FrameRange &&
			(frame.Start.Offset != nil || frame.End.Offset != nil)
		switch k := rng.IntN(4); {
		case rangeOffset || k == 1:
			order = []SortKey{{Expr: winTestCol(2), Descending: rng.IntN(2) == 0, NullsFirst: rng.IntN(2) == 0}}
		case k == 2:
			order = []SortKey{{Expr: winTestCol(2), NullsFirst: true}, {Expr: winTestCol(4), Descending: true}}
		case k == 3 && frame == nil:
			// no ORDER BY: the whole partition, peers all
		default:
			order = []SortKey{{Expr: winTestCol(4)}}
		}
		var funcs []*WindowFunc
		var names []string
		for j, c := range calls {
			f, err := NewWindowFunc(c.name, c.args, part, order, frame)
			if err != nil {
				t.Fatal(err)
			}
			funcs = append(funcs, f)
			names = append(names, fmt.Sprint("w", j))
		}
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			mem := opsTestMem(t)
			budget := NewBudget(0)
			w, err := NewWindow(opsTestValues(t, mem, winTestSchema, rows, 1+rng.IntN(100)), funcs, names,
				WindowOptions{Mem: mem, Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			got := opsTestRows(t, w)
			if len(got) != n {
				t.Fatalf("got %d rows, want %d", len(got), n)
			}
			for j, f := range funcs {
				want := winTestOracle(rows, f)
				for r := range got {
					if got[r][0].(int64) != int64(r) {
						t.Fatalf("row %d is id %v: output is not in input order", r, got[r][0])
					}
					g, o := got[r][len(winTestSchema.Fields())+j], want[r]
					if v, ok := o.(int32); ok {
						o = int64(v)
					}
					if gf, ok := g.(float64); ok && o != nil {
						if math.Abs(gf-o.(float64)) < 1e-9 {
							continue
						}
					}
					if !reflect.DeepEqual(g, o) {
						t.Fatalf("%s: row %d (%v): got %v (%T), want %v (%T)", f, r, rows[r], g, g, o, o)
					}
				}
			}
			if budget.Used() != 0 {
				t.Fatalf("budget holds %d bytes after the end", budget.Used())
			}
		})
	}
}

func TestWindowFuncErrors(t *testing.T) {
	i64 := winTestCol(2)
	str := winTestCol(4)
	off := func(n int64) FrameBound { return FrameBound{Kind: OffsetPreceding, Offset: scalar.NewInt64Scalar(n)} }
	order := []SortKey{{Expr: i64}}
	for _, tc := range []struct {
		name  string
		args  []Expr
		order []SortKey
		frame *Frame
		want  string
	}{
		{"foo", nil, nil, nil, "window function foo does not exist"},
		{"row_number", []Expr{i64}, nil, nil, "window function row_number(int64) does not exist; check the number and types of its arguments"},
		{"sum", []Expr{str}, nil, nil, "window function sum(utf8) does not exist; check the number and types of its arguments"},
		{"lag", []Expr{i64, str}, nil, nil, "window function lag: offset must be an integer, not utf8"},
		{"ntile", []Expr{str}, nil, nil, "window function ntile(utf8) does not exist; check the number and types of its arguments"},
		{"nth_value", []Expr{str}, nil, nil, "window function nth_value(utf8) does not exist; check the number and types of its arguments"},
		{"sum", []Expr{i64}, order, &Frame{FrameRows, FrameBound{Kind: UnboundedFollowing}, FrameBound{Kind: UnboundedFollowing}, ExcludeNoOthers}, "frame start cannot be UNBOUNDED FOLLOWING"},
		{"sum", []Expr{i64}, order, &Frame{FrameRows, FrameBound{Kind: UnboundedPreceding}, FrameBound{Kind: UnboundedPreceding}, ExcludeNoOthers}, "frame end cannot be UNBOUNDED PRECEDING"},
		{"sum", []Expr{i64}, order, &Frame{FrameRows, FrameBound{Kind: CurrentRow}, off(1), ExcludeNoOthers}, "frame starting from current row cannot have preceding rows"},
		{"sum", []Expr{i64}, order, &Frame{FrameRows, off(-1), FrameBound{Kind: CurrentRow}, ExcludeNoOthers}, "frame starting offset must not be negative"},
		{"sum", []Expr{i64}, order, &Frame{FrameRows, FrameBound{Kind: UnboundedPreceding}, FrameBound{Kind: OffsetFollowing, Offset: scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64)}, ExcludeNoOthers}, "frame ending offset must not be null"},
		{"sum", []Expr{i64}, []SortKey{{Expr: i64}, {Expr: str}}, &Frame{FrameRange, off(1), FrameBound{Kind: CurrentRow}, ExcludeNoOthers}, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"},
		{"sum", []Expr{i64}, []SortKey{{Expr: str}}, &Frame{FrameRange, off(1), FrameBound{Kind: CurrentRow}, ExcludeNoOthers}, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type utf8 and offset type int64"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := NewWindowFunc(tc.name, tc.args, nil, tc.order, tc.frame)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWindowMemoryLimit(t *testing.T) {
	mem := opsTestMem(t)
	rows := winTestRows(rand.New(rand.NewPCG(1, 1)), 2000)
	f, err := NewWindowFunc("row_number", nil, nil, []SortKey{{Expr: winTestCol(2)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(8 << 10)
	w, err := NewWindow(opsTestValues(t, mem, winTestSchema, rows, 100), []*WindowFunc{f}, []string{"rn"}, WindowOptions{Mem: mem, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), w)
	if !errors.Is(err, ErrMemoryLimit) || !strings.HasPrefix(err.Error(), "window: memory limit exceeded: the window function input needs more than the statement memory limit of 8 KiB") {
		t.Fatalf("got %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d bytes", budget.Used())
	}
}

func TestWindowTypesAndExplain(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	for _, tc := range []struct {
		name string
		arg  arrow.DataType
		want arrow.DataType
	}{
		{"sum", arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64},
		{"sum", arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 38, Scale: 0}},
		{"sum", dec, &arrow.Decimal128Type{Precision: 38, Scale: 2}},
		{"avg", dec, &arrow.Decimal128Type{Precision: 38, Scale: 6}},
		{"avg", arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float64},
		{"min", arrow.BinaryTypes.String, arrow.BinaryTypes.String},
		{"count", arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64},
	} {
		f, err := NewWindowFunc(tc.name, []Expr{&Column{Index: 0, Type: tc.arg, Name: "a"}}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !arrow.TypeEqual(f.DataType(), tc.want) {
			t.Errorf("%s(%s) is %s, want %s", tc.name, tc.arg, f.DataType(), tc.want)
		}
	}
	f, err := NewWindowFunc("count", nil, []Expr{winTestCol(1)}, []SortKey{{Expr: winTestCol(2), Descending: true, NullsFirst: true}},
		&Frame{FrameRows, FrameBound{Kind: OffsetPreceding, Offset: scalar.NewInt64Scalar(2)}, FrameBound{Kind: CurrentRow}, ExcludeNoOthers})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.String(), "count(*) OVER (PARTITION BY p ORDER BY o DESC NULLS FIRST ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestWindowDecimal checks exact decimal sums and rounded averages.
func TestWindowDecimal(t *testing.T) {
	mem := opsTestMem(t)
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dec, Nullable: true}}, nil)
	rows := [][]any{{scalar.NewDecimal128Scalar(decimalTestNum(100), dec)}, {scalar.NewDecimal128Scalar(decimalTestNum(201), dec)}, {nil}, {scalar.NewDecimal128Scalar(decimalTestNum(-1), dec)}}
	col := &Column{Index: 0, Type: dec, Name: "d"}
	sum, _ := NewWindowFunc("sum", []Expr{col}, nil, nil, nil)
	avg, _ := NewWindowFunc("avg", []Expr{col}, nil, nil, nil)
	w, err := NewWindow(opsTestValues(t, mem, schema, rows, 10), []*WindowFunc{sum, avg}, []string{"s", "a"}, WindowOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	got := opsTestRows(t, w)
	// (1.00 + 2.01 - 0.01) / 3 = 1.000000
	if got[0][1] != "3" || got[0][2] != "1" {
		t.Fatalf("got %v", got[0])
	}
}

func decimalTestNum(v int64) (n decimal128.Num) { return decimal128.FromI64(v) }

func TestWindowEmptyInput(t *testing.T) {
	mem := opsTestMem(t)
	f, err := NewWindowFunc("rank", nil, nil, []SortKey{{Expr: winTestCol(2)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(opsTestValues(t, mem, winTestSchema, nil, 1), []*WindowFunc{f}, []string{"r"}, WindowOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if rows := opsTestRows(t, w); len(rows) != 0 {
		t.Fatalf("got %v", rows)
	}
	if got := w.Schema().Field(len(winTestSchema.Fields())).Name; got != "r" {
		t.Fatalf("schema field %q", got)
	}
}

func TestWindowRuntimeErrors(t *testing.T) {
	rows := winTestRows(rand.New(rand.NewPCG(2, 2)), 50)
	zero := &Literal{Value: scalar.NewInt64Scalar(0)}
	for _, tc := range []struct {
		name string
		args []Expr
		want string
	}{
		{"ntile", []Expr{zero}, "argument of ntile must be greater than zero"},
		{"nth_value", []Expr{winTestCol(3), zero}, "argument of nth_value must be greater than zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := opsTestMem(t)
			f, err := NewWindowFunc(tc.name, tc.args, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWindow(opsTestValues(t, mem, winTestSchema, rows, 10), []*WindowFunc{f}, []string{"w"}, WindowOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Drain(context.Background(), w); err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWindowValueTypes copies values of extension, temporal and decimal
// types through first_value, max and lag (with a default).
func TestWindowValueTypes(t *testing.T) {
	mem := opsTestMem(t)
	uuidType := extensions.NewUUIDType()
	dec := &arrow.Decimal128Type{Precision: 9, Scale: 3}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: uuidType, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "n", Type: dec, Nullable: true},
	}, nil)
	u := func(b byte) []byte { v := make([]byte, 16); v[0] = b; return v }
	rows := [][]any{
		{u(3), 10, decimal128.FromI64(5)},
		{nil, nil, nil},
		{u(9), 7, decimal128.FromI64(-5)},
		{u(1), 12, decimal128.FromI64(7)},
	}
	var funcs []*WindowFunc
	var names []string
	for i, f := range schema.Fields() {
		c := &Column{Index: i, Type: f.Type}
		fv, err := NewWindowFunc("first_value", []Expr{c}, nil, []SortKey{{Expr: c, Descending: true}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		mx, err := NewWindowFunc("max", []Expr{c}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		lag, err := NewWindowFunc("lag", []Expr{c, &Literal{Value: scalar.NewInt64Scalar(1)}, c}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		funcs = append(funcs, fv, mx, lag)
		names = append(names, "fv"+f.Name, "max"+f.Name, "lag"+f.Name)
	}
	w, err := NewWindow(opsTestValues(t, mem, schema, rows, 2), funcs, names, WindowOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	batches, err := Drain(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range batches {
		for r := 0; r < int(b.NumRows()); r++ {
			var row []string
			for c := 3; c < int(b.NumCols()); c++ {
				row = append(row, b.Column(c).ValueStr(r))
			}
			got = append(got, strings.Join(row, " "))
		}
		b.Release()
	}
	// ORDER BY x DESC (NULLS LAST, as the key says) makes first_value the
	// max; lag's default is the row's own value on the first row.
	u9, u3 := "09000000-0000-0000-0000-000000000000", "03000000-0000-0000-0000-000000000000"
	want := []string{
		u9 + " " + u9 + " " + u3 + " 1970-01-13 1970-01-13 1970-01-11 0.007 0.007 0.005",
		u9 + " " + u9 + " " + u3 + " 1970-01-13 1970-01-13 1970-01-11 0.007 0.007 0.005",
		u9 + " " + u9 + " (null) 1970-01-13 1970-01-13 (null) 0.007 0.007 (null)",
		u9 + " " + u9 + " " + u9 + " 1970-01-13 1970-01-13 1970-01-08 0.007 0.007 -0.005",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWindowRangeOffsetTypes checks RANGE offsets over float, date and
// timestamp keys, and the months-interval error.
func TestWindowRangeOffsetTypes(t *testing.T) {
	day := arrow.MonthDayNanoInterval{Days: 1}
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	for _, tc := range []struct {
		name  string
		dt    arrow.DataType
		vals  []any
		lo    scalar.Scalar
		hi    scalar.Scalar // nil: CURRENT ROW
		desc  bool
		count []int64
	}{
		{"float", arrow.PrimitiveTypes.Float64, []any{1.0, 1.5, 2.0, 3.5, math.NaN(), nil},
			scalar.NewFloat64Scalar(0.5), scalar.NewFloat64Scalar(0.5), false, []int64{2, 3, 2, 1, 1, 1}},
		{"float desc", arrow.PrimitiveTypes.Float64, []any{1.0, 1.5, 2.0, 3.5, math.NaN(), nil},
			scalar.NewFloat64Scalar(0.5), nil, true, []int64{2, 2, 1, 1, 1, 1}},
		{"date", arrow.FixedWidthTypes.Date32, []any{0, 1, 3, nil},
			scalar.NewMonthDayNanoIntervalScalar(day), nil, false, []int64{1, 2, 1, 1}},
		{"date days", arrow.FixedWidthTypes.Date32, []any{0, 1, 3, nil},
			scalar.NewInt32Scalar(2), nil, false, []int64{1, 2, 2, 1}},
		{"timestamp", ts, []any{0, 3_600_000_000, 86_400_000_000 + 1, 2 * 86_400_000_000},
			scalar.NewMonthDayNanoIntervalScalar(day), nil, false, []int64{1, 2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := opsTestMem(t)
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: tc.dt, Nullable: true}}, nil)
			rows := make([][]any, len(tc.vals))
			for i, v := range tc.vals {
				rows[i] = []any{v}
			}
			end := FrameBound{Kind: CurrentRow}
			if tc.hi != nil {
				end = FrameBound{Kind: OffsetFollowing, Offset: tc.hi}
			}
			k := &Column{Index: 0, Type: tc.dt}
			f, err := NewWindowFunc("count", nil, nil, []SortKey{{Expr: k, Descending: tc.desc}},
				&Frame{FrameRange, FrameBound{Kind: OffsetPreceding, Offset: tc.lo}, end, ExcludeNoOthers})
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWindow(opsTestValues(t, mem, schema, rows, 4), []*WindowFunc{f}, []string{"c"}, WindowOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range opsTestRows(t, w) {
				got = append(got, r[1].(int64))
			}
			if !reflect.DeepEqual(got, tc.count) {
				t.Fatalf("got %v, want %v", got, tc.count)
			}
		})
	}
	k := &Column{Index: 0, Type: ts, Name: "t"}
	_, err := NewWindowFunc("count", nil, nil, []SortKey{{Expr: k}},
		&Frame{FrameRange, FrameBound{Kind: OffsetPreceding, Offset: scalar.NewMonthDayNanoIntervalScalar(arrow.MonthDayNanoInterval{Months: 1})}, FrameBound{Kind: CurrentRow}, ExcludeNoOthers})
	if want := "RANGE frame offsets cannot contain months; use days (e.g. INTERVAL '30 days')"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestWindowChildError(t *testing.T) {
	mem := opsTestMem(t)
	rows := winTestRows(rand.New(rand.NewPCG(3, 3)), 500)
	f, err := NewWindowFunc("lag", []Expr{winTestCol(4)}, nil, []SortKey{{Expr: winTestCol(2)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(0)
	w, err := NewWindow(&sortTestFailing{Operator: opsTestValues(t, mem, winTestSchema, rows, 50), left: 4},
		[]*WindowFunc{f}, []string{"l"}, WindowOptions{Mem: mem, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Drain(context.Background(), w); err == nil || err.Error() != "disk on fire" {
		t.Fatalf("got %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d bytes", budget.Used())
	}
}

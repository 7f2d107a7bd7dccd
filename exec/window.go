package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// FrameUnit is how a window frame measures its bounds.
type FrameUnit uint8

const (
	// FrameRows counts physical rows.
	FrameRows FrameUnit = iota
	// FrameRange measures by the ORDER BY value; CURRENT ROW includes the
	// row's peers.
	FrameRange
	// FrameGroups counts peer groups (rows equal under ORDER BY).
	FrameGroups
)

// FrameExclude is a frame's EXCLUDE option.
type FrameExclude uint8

const (
	ExcludeNoOthers FrameExclude = iota
	// ExcludeCurrentRow leaves the current row out of its frame.
	ExcludeCurrentRow
	// ExcludeGroup leaves out the current row and its peers.
	ExcludeGroup
	// ExcludeTies leaves out the current row's peers but not the row.
	ExcludeTies
)

// FrameBoundKind is one end of a window frame.
type FrameBoundKind uint8

const (
	UnboundedPreceding FrameBoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is a frame start or end. Offset is set for OffsetPreceding
// and OffsetFollowing: a non-negative constant, an integer for ROWS; for
// RANGE a number for numeric ORDER BY keys, or an integer number of days
// or a day/time interval for DATE, TIME and TIMESTAMP keys.
type FrameBound struct {
	Kind   FrameBoundKind
	Offset scalar.Scalar
}

// Frame is a window frame: ROWS|RANGE|GROUPS BETWEEN Start AND End
// [EXCLUDE …].
type Frame struct {
	Unit       FrameUnit
	Start, End FrameBound
	Exclude    FrameExclude
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return b.Offset.String() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return b.Offset.String() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

func (f *Frame) String() string {
	unit := "ROWS"
	switch f.Unit {
	case FrameRange:
		unit = "RANGE"
	case FrameGroups:
		unit = "GROUPS"
	}
	s := fmt.Sprintf("%s BETWEEN %s AND %s", unit, f.Start, f.End)
	switch f.Exclude {
	case ExcludeCurrentRow:
		s += " EXCLUDE CURRENT ROW"
	case ExcludeGroup:
		s += " EXCLUDE GROUP"
	case ExcludeTies:
		s += " EXCLUDE TIES"
	}
	return s
}

// winKind is the function a WindowFunc computes.
type winKind uint8

const (
	winRowNumber winKind = iota
	winRank
	winDenseRank
	winLag
	winLead
	winFirstValue
	winLastValue
	winSum
	winCount
	winCountStar
	winMin
	winMax
	winAvg
	winPercentRank
	winCumeDist
	winNtile
	winNthValue
)

// WindowFuncNames lists the window functions NewWindowFunc knows.
var WindowFuncNames = []string{"avg", "count", "cume_dist", "dense_rank", "first_value", "lag", "last_value", "lead", "max", "min", "nth_value", "ntile", "percent_rank", "rank", "row_number", "sum"}

// WindowFunc is one window function call: name(args) OVER (PARTITION BY
// ... ORDER BY ... frame).
//
// Result types match the GROUP BY aggregates (see Aggregate):
// row_number, rank, dense_rank, ntile and count are BIGINT; percent_rank
// and cume_dist DOUBLE; sum(tinyint..integer)
// is BIGINT, sum(bigint) DECIMAL(38,0), sum(decimal(p,s)) DECIMAL(38,s),
// sum(real, double) DOUBLE; avg is DOUBLE, or DECIMAL(38, max(s,6)) for
// decimals; lag, lead, first_value, last_value, nth_value, min and max
// have their argument's type.
type WindowFunc struct {
	Name        string
	Args        []Expr
	PartitionBy []Expr
	OrderBy     []SortKey
	// Frame is nil for the default: with ORDER BY, RANGE BETWEEN
	// UNBOUNDED PRECEDING AND CURRENT ROW (the row's peers included);
	// without, the whole partition.
	Frame *Frame

	kind winKind
	typ  arrow.DataType
}

// NewWindowFunc validates a window function call and computes its type.
// count(*) is count with no arguments.
func NewWindowFunc(name string, args []Expr, partitionBy []Expr, orderBy []SortKey, frame *Frame) (*WindowFunc, error) {
	f := &WindowFunc{Name: strings.ToLower(name), Args: args, PartitionBy: partitionBy, OrderBy: orderBy, Frame: frame}
	for _, a := range args {
		if a == nil {
			return nil, fmt.Errorf("exec: window function %s: nil argument (planner bug)", name)
		}
	}
	argTypes := make([]string, len(args))
	for i, a := range args {
		argTypes[i] = a.DataType().String()
	}
	noMatch := func() error {
		return fmt.Errorf("window function %s(%s) does not exist; check the number and types of its arguments", f.Name, strings.Join(argTypes, ", "))
	}
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return noMatch()
		}
		return nil
	}
	var err error
	switch f.Name {
	case "row_number", "rank", "dense_rank":
		err = nargs(0, 0)
		f.kind = map[string]winKind{"row_number": winRowNumber, "rank": winRank, "dense_rank": winDenseRank}[f.Name]
		f.typ = arrow.PrimitiveTypes.Int64
	case "lag", "lead":
		if err = nargs(1, 3); err != nil {
			break
		}
		f.kind = winLag
		if f.Name == "lead" {
			f.kind = winLead
		}
		f.typ = args[0].DataType()
		if len(args) >= 2 && !winIsInteger(args[1].DataType()) {
			return nil, fmt.Errorf("window function %s: offset must be an integer, not %s", f.Name, args[1].DataType())
		}
		if len(args) == 3 && !arrow.TypeEqual(args[2].DataType(), f.typ) && args[2].DataType().ID() != arrow.NULL {
			return nil, fmt.Errorf("window function %s: default is %s but the value is %s; cast one to the other (planner bug)", f.Name, args[2].DataType(), f.typ)
		}
	case "percent_rank", "cume_dist":
		err = nargs(0, 0)
		f.kind, f.typ = winPercentRank, arrow.PrimitiveTypes.Float64
		if f.Name == "cume_dist" {
			f.kind = winCumeDist
		}
	case "ntile":
		if err = nargs(1, 1); err == nil && !winIsInteger(args[0].DataType()) {
			err = noMatch()
		}
		f.kind, f.typ = winNtile, arrow.PrimitiveTypes.Int64
	case "nth_value":
		if err = nargs(2, 2); err == nil && !winIsInteger(args[1].DataType()) {
			err = noMatch()
		}
		if err == nil {
			f.kind, f.typ = winNthValue, args[0].DataType()
		}
	case "first_value", "last_value":
		err = nargs(1, 1)
		f.kind = winFirstValue
		if f.Name == "last_value" {
			f.kind = winLastValue
		}
		if err == nil {
			f.typ = args[0].DataType()
		}
	case "count":
		err = nargs(0, 1)
		f.kind, f.typ = winCountStar, arrow.PrimitiveTypes.Int64
		if len(args) == 1 {
			f.kind = winCount
		}
	case "min", "max":
		if err = nargs(1, 1); err != nil {
			break
		}
		f.kind = winMin
		if f.Name == "max" {
			f.kind = winMax
		}
		f.typ = args[0].DataType()
		if skKeyTypeSupported(f.typ) != nil {
			err = noMatch()
		}
	case "sum", "avg":
		if err = nargs(1, 1); err != nil {
			break
		}
		f.kind = winSum
		if f.Name == "avg" {
			f.kind = winAvg
		}
		t := args[0].DataType()
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32:
			f.typ = arrow.PrimitiveTypes.Int64
		case arrow.INT64:
			f.typ = &arrow.Decimal128Type{Precision: 38, Scale: 0}
		case arrow.FLOAT32, arrow.FLOAT64:
			f.typ = arrow.PrimitiveTypes.Float64
		case arrow.DECIMAL128:
			s := t.(*arrow.Decimal128Type).Scale
			if f.kind == winAvg {
				s = max(s, 6)
			}
			f.typ = &arrow.Decimal128Type{Precision: 38, Scale: s}
		default:
			err = noMatch()
		}
		if err == nil && f.kind == winAvg && t.ID() != arrow.DECIMAL128 {
			f.typ = arrow.PrimitiveTypes.Float64
		}
	default:
		return nil, fmt.Errorf("window function %s does not exist", f.Name)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range partitionBy {
		if p == nil {
			return nil, fmt.Errorf("exec: window function %s: nil PARTITION BY expression (planner bug)", name)
		}
		if err := skKeyTypeSupported(p.DataType()); err != nil {
			return nil, fmt.Errorf("PARTITION BY %s: %w", p, err)
		}
	}
	for _, k := range orderBy {
		if k.Expr == nil {
			return nil, fmt.Errorf("exec: window function %s: nil ORDER BY expression (planner bug)", name)
		}
		if err := skKeyTypeSupported(k.Expr.DataType()); err != nil {
			return nil, fmt.Errorf("ORDER BY %s: %w", k.Expr, err)
		}
	}
	if frame != nil {
		if err := f.checkFrame(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// checkFrame applies Postgres's rules (and messages) for frames.
func (f *WindowFunc) checkFrame() error {
	fr := f.Frame
	switch {
	case fr.Start.Kind == UnboundedFollowing:
		return fmt.Errorf("frame start cannot be UNBOUNDED FOLLOWING")
	case fr.End.Kind == UnboundedPreceding:
		return fmt.Errorf("frame end cannot be UNBOUNDED PRECEDING")
	case fr.Start.Kind == CurrentRow && fr.End.Kind == OffsetPreceding:
		return fmt.Errorf("frame starting from current row cannot have preceding rows")
	case fr.Start.Kind == OffsetFollowing && (fr.End.Kind == OffsetPreceding || fr.End.Kind == CurrentRow):
		return fmt.Errorf("frame starting from following row cannot have preceding rows")
	case fr.Unit == FrameGroups && len(f.OrderBy) == 0:
		return fmt.Errorf("GROUPS mode requires an ORDER BY clause")
	}
	for _, b := range []struct {
		bound FrameBound
		which string
	}{{fr.Start, "starting"}, {fr.End, "ending"}} {
		if b.bound.Kind != OffsetPreceding && b.bound.Kind != OffsetFollowing {
			continue
		}
		if b.bound.Offset == nil || !b.bound.Offset.IsValid() {
			return fmt.Errorf("frame %s offset must not be null", b.which)
		}
		if fr.Unit == FrameRows || fr.Unit == FrameGroups {
			n, ok := winScalarInt(b.bound.Offset)
			if !ok {
				unit := "ROWS"
				if fr.Unit == FrameGroups {
					unit = "GROUPS"
				}
				return fmt.Errorf("%s frame %s offset must be an integer, not %s", unit, b.which, b.bound.Offset.DataType())
			}
			if n < 0 {
				return fmt.Errorf("frame %s offset must not be negative", b.which)
			}
			continue
		}
		if len(f.OrderBy) != 1 {
			return fmt.Errorf("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
		}
		if _, err := newWinRangeKey(f.OrderBy[0].Expr.DataType(), b.bound.Offset, b.which); err != nil {
			return err
		}
	}
	return nil
}

// DataType is the type of the function's result column.
func (f *WindowFunc) DataType() arrow.DataType { return f.typ }

func (f *WindowFunc) String() string {
	args := make([]string, len(f.Args))
	for i, a := range f.Args {
		args[i] = a.String()
	}
	s := f.Name + "(" + strings.Join(args, ", ") + ")"
	if f.kind == winCountStar {
		s = f.Name + "(*)"
	}
	return s + " OVER (" + f.spec() + ")"
}

// spec renders the OVER clause; functions with equal specs share a sort.
func (f *WindowFunc) spec() string {
	var parts []string
	if len(f.PartitionBy) > 0 {
		ps := make([]string, len(f.PartitionBy))
		for i, p := range f.PartitionBy {
			ps[i] = p.String()
		}
		parts = append(parts, "PARTITION BY "+strings.Join(ps, ", "))
	}
	if len(f.OrderBy) > 0 {
		os := make([]string, len(f.OrderBy))
		for i, k := range f.OrderBy {
			os[i] = k.String()
		}
		parts = append(parts, "ORDER BY "+strings.Join(os, ", "))
	}
	if f.Frame != nil {
		parts = append(parts, f.Frame.String())
	}
	return strings.Join(parts, " ")
}

func winIsInteger(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return true
	}
	return false
}

// winScalarInt reads an integer scalar.
func winScalarInt(s scalar.Scalar) (int64, bool) {
	switch v := s.(type) {
	case *scalar.Int8:
		return int64(v.Value), true
	case *scalar.Int16:
		return int64(v.Value), true
	case *scalar.Int32:
		return int64(v.Value), true
	case *scalar.Int64:
		return v.Value, true
	case *scalar.Uint8:
		return int64(v.Value), true
	case *scalar.Uint16:
		return int64(v.Value), true
	case *scalar.Uint32:
		return int64(v.Value), true
	}
	return 0, false
}

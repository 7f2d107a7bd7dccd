package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// Column is one output column of a Node.
type Column struct {
	ID   ColumnID
	Name string
	// Table is the qualifier the column is visible under ("" for none).
	Table    string
	Type     arrow.DataType
	Nullable bool
}

// Node is a logical plan node. Columns of pass-through nodes (Filter,
// Sort, Limit) are computed from their input, so pruning a scan's columns
// narrows every node above it.
type Node interface {
	Columns() []Column
	Children() []Node
	String() string
}

// Scan reads a table at a snapshot.
type Scan struct {
	Table *TableRef
	Snap  *table.Snapshot // nil: the table has no snapshot, no rows
	// All is every column of the table; Cols the ones read (pruned).
	All  []Column
	Cols []Column
	// Fields are the Iceberg column names of Cols.
	Fields []string
	// Filters are conjuncts of the query's predicate over this table;
	// Pushed is the part of them iceberg-go can prune files with.
	Filters []Expr
	Pushed  iceberg.BooleanExpression
	// Exact are the conjuncts of Filters the scan applies exactly
	// (predicates on string columns that mean in Iceberg what they mean
	// in SQL), so no Filter above it tests them; ExactPushed is their
	// Iceberg form, part of Pushed too.
	Exact       []Expr
	ExactPushed iceberg.BooleanExpression
	// CountOnly: nothing above reads a column of the scan, only its rows
	// are counted (count(*), SELECT 1); Cols holds one column all the
	// same, whose values the scan may leave NULL.
	CountOnly bool
	// Alias is the name the query uses for the table.
	Alias string
}

func (s *Scan) Columns() []Column { return s.Cols }
func (s *Scan) Children() []Node  { return nil }
func (s *Scan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scan %s", s.Table.Name)
	if s.Snap != nil {
		fmt.Fprintf(&b, "@%d", s.Snap.SnapshotID)
	}
	names := make([]string, len(s.Cols))
	for i, c := range s.Cols {
		names[i] = c.Name
	}
	fmt.Fprintf(&b, " [%s]", strings.Join(names, ", "))
	if s.ExactPushed != nil {
		fmt.Fprintf(&b, " exact=%s", s.ExactPushed)
	}
	if s.Pushed != nil {
		fmt.Fprintf(&b, " pushed=%s", s.Pushed)
	}
	return b.String()
}

// SourceScan reads a registered source, a table function or a file.
type SourceScan struct {
	Name string
	Cols []Column
	Open func() (exec.Operator, error)
}

func (s *SourceScan) Columns() []Column { return s.Cols }
func (s *SourceScan) Children() []Node  { return nil }
func (s *SourceScan) String() string    { return "Source " + s.Name }

// OneRow yields one row with no columns: FROM-less SELECT.
type OneRow struct{}

func (*OneRow) Columns() []Column { return nil }
func (*OneRow) Children() []Node  { return nil }
func (*OneRow) String() string    { return "OneRow" }

// Values is a VALUES list; every row has len(Cols) expressions of the
// column types.
type Values struct {
	Rows [][]Expr
	Cols []Column
}

func (v *Values) Columns() []Column { return v.Cols }
func (v *Values) Children() []Node  { return nil }
func (v *Values) String() string    { return fmt.Sprintf("Values (%d rows)", len(v.Rows)) }

// Filter keeps rows for which Pred is TRUE.
type Filter struct {
	Input Node
	Pred  Expr
}

func (f *Filter) Columns() []Column { return f.Input.Columns() }
func (f *Filter) Children() []Node  { return []Node{f.Input} }
func (f *Filter) String() string    { return "Filter " + f.Pred.String() }

// Project computes Exprs; Cols[i] is the output of Exprs[i].
type Project struct {
	Input Node
	Exprs []Expr
	Cols  []Column
}

func (p *Project) Columns() []Column { return p.Cols }
func (p *Project) Children() []Node  { return []Node{p.Input} }
func (p *Project) String() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
		if p.Cols[i].Name != "" && p.Cols[i].Name != parts[i] {
			parts[i] += " AS " + p.Cols[i].Name
		}
	}
	return "Project " + strings.Join(parts, ", ")
}

// JoinKind is exec's join kinds.
type JoinKind = exec.JoinKind

// Join joins Left and Right on On (nil: a cross join). Inner, outer and
// cross joins output Left's columns then Right's; semi and anti joins
// Left's; a mark join Left's plus Mark.
type Join struct {
	Kind        JoinKind
	Left, Right Node
	On          Expr
	// Residual is a condition checked per candidate pair and never made a
	// hash key, even when it is an equality: the IN comparison of a
	// correlated mark join, whose NULLs count only among the candidates
	// the correlation keys in On select (see exec.JoinMark).
	Residual Expr
	Mark     *Column
	// Delim makes the join a dependent join (see Delim).
	Delim *Delim
}

func (j *Join) Columns() []Column {
	l := j.Left.Columns()
	switch j.Kind {
	case exec.JoinSemi, exec.JoinAnti, exec.JoinNullAwareAnti:
		return l
	case exec.JoinMark:
		return append(append([]Column(nil), l...), *j.Mark)
	}
	r := j.Right.Columns()
	out := make([]Column, 0, len(l)+len(r))
	for _, c := range l {
		if j.Kind == exec.JoinRight || j.Kind == exec.JoinFull {
			c.Nullable = true
		}
		out = append(out, c)
	}
	for _, c := range r {
		if j.Kind == exec.JoinLeft || j.Kind == exec.JoinFull {
			c.Nullable = true
		}
		out = append(out, c)
	}
	return out
}
func (j *Join) Children() []Node { return []Node{j.Left, j.Right} }
func (j *Join) String() string {
	s := "Join " + j.Kind.String()
	if j.Delim != nil {
		s = "Join dependent " + j.Kind.String()
	}
	if j.On == nil {
		return s + " (cross)"
	}
	s += " on " + j.On.String()
	if j.Residual != nil {
		s += " residual " + j.Residual.String()
	}
	return s
}

// AggCall is one aggregate of an Aggregate node.
type AggCall struct {
	Name     string
	Args     []Expr
	Distinct bool
	Filter   Expr
	OrderBy  []SortKey
	Col      Column
}

// Aggregate groups Input by GroupBy and computes Aggs: output is the
// group columns then the aggregates.
type Aggregate struct {
	Input   Node
	GroupBy []Expr
	Groups  []Column
	Aggs    []*AggCall
}

func (a *Aggregate) Columns() []Column {
	out := append([]Column(nil), a.Groups...)
	for _, c := range a.Aggs {
		out = append(out, c.Col)
	}
	return out
}
func (a *Aggregate) Children() []Node { return []Node{a.Input} }
func (a *Aggregate) String() string {
	g := make([]string, len(a.GroupBy))
	for i, e := range a.GroupBy {
		g[i] = e.String()
	}
	ag := make([]string, len(a.Aggs))
	for i, c := range a.Aggs {
		args := make([]string, len(c.Args))
		for j, x := range c.Args {
			args[j] = x.String()
		}
		if len(args) == 0 && c.Name == "count" {
			args = []string{"*"}
		}
		d := ""
		if c.Distinct {
			d = "DISTINCT "
		}
		ag[i] = fmt.Sprintf("%s(%s%s)", c.Name, d, strings.Join(args, ", "))
	}
	return fmt.Sprintf("Aggregate group=[%s] aggs=[%s]", strings.Join(g, ", "), strings.Join(ag, ", "))
}

// WindowCall is one window function of a Window node.
type WindowCall struct {
	Name        string
	Args        []Expr
	PartitionBy []Expr
	OrderBy     []SortKey
	Frame       *exec.Frame
	Col         Column
}

// Window appends one column per function to its input.
type Window struct {
	Input Node
	Funcs []*WindowCall
}

func (w *Window) Columns() []Column {
	out := append([]Column(nil), w.Input.Columns()...)
	for _, f := range w.Funcs {
		out = append(out, f.Col)
	}
	return out
}
func (w *Window) Children() []Node { return []Node{w.Input} }
func (w *Window) String() string {
	names := make([]string, len(w.Funcs))
	for i, f := range w.Funcs {
		names[i] = f.Name
	}
	return "Window [" + strings.Join(names, ", ") + "]"
}

// SortKey orders by an expression.
type SortKey struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

func (k SortKey) String() string { return k.Expr.String() + exec.OrderSuffix(k.Desc, k.NullsFirst) }

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
}

func (s *Sort) Columns() []Column { return s.Input.Columns() }
func (s *Sort) Children() []Node  { return []Node{s.Input} }
func (s *Sort) String() string {
	parts := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		parts[i] = k.String()
	}
	return "Sort " + strings.Join(parts, ", ")
}

// Limit is LIMIT/OFFSET; Limit < 0 means none.
type Limit struct {
	Input  Node
	Limit  int64
	Offset int64
}

func (l *Limit) Columns() []Column { return l.Input.Columns() }
func (l *Limit) Children() []Node  { return []Node{l.Input} }
func (l *Limit) String() string {
	return fmt.Sprintf("Limit %d offset %d", l.Limit, l.Offset)
}

// Distinct removes duplicate rows.
type Distinct struct{ Input Node }

func (d *Distinct) Columns() []Column { return d.Input.Columns() }
func (d *Distinct) Children() []Node  { return []Node{d.Input} }
func (d *Distinct) String() string    { return "Distinct" }

// SetOp is UNION/EXCEPT/INTERSECT [ALL]; both inputs have Cols' types.
type SetOp struct {
	Op          string // "union", "except", "intersect"
	All         bool
	Left, Right Node
	Cols        []Column
}

func (s *SetOp) Columns() []Column { return s.Cols }
func (s *SetOp) Children() []Node  { return []Node{s.Left, s.Right} }
func (s *SetOp) String() string {
	if s.All {
		return "SetOp " + s.Op + " all"
	}
	return "SetOp " + s.Op
}

// MetadataAnswer is an aggregate answered from manifest statistics
// without reading data files: one row of constants.
type MetadataAnswer struct {
	Table string
	Row   []Expr
	Cols  []Column
}

func (m *MetadataAnswer) Columns() []Column { return m.Cols }
func (m *MetadataAnswer) Children() []Node  { return nil }
func (m *MetadataAnswer) String() string {
	return "MetadataAnswer " + m.Table + " (from manifest statistics, no data files read)"
}

// explainLogical renders a plan tree.
func explainLogical(n Node) string {
	var b strings.Builder
	var walk func(Node, int)
	walk = func(n Node, d int) {
		b.WriteString(strings.Repeat("  ", d))
		b.WriteString(n.String())
		b.WriteByte('\n')
		for _, c := range n.Children() {
			walk(c, d+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// Unnest applies a set-returning function (unnest, generate_series,
// range) to each row of Input: a lateral table function, or one over
// constants (Input a OneRow). Output: Input's columns, Col, then Ord
// (WITH ORDINALITY).
type Unnest struct {
	Input Node
	Func  string
	Args  []Expr
	Col   Column
	// More are the columns of unnest's further arrays (unnest(a, b)
	// zips them: Col is a's elements, More[0] b's).
	More []Column
	Ord  *Column
	// Outer keeps an input row whose function yields no rows, with NULLs
	// (LEFT JOIN … ON TRUE).
	Outer bool
}

func (u *Unnest) Columns() []Column {
	out := append(append([]Column(nil), u.Input.Columns()...), u.Col)
	out = append(out, u.More...)
	if u.Ord != nil {
		out = append(out, *u.Ord)
	}
	return out
}
func (u *Unnest) Children() []Node { return []Node{u.Input} }
func (u *Unnest) String() string {
	args := make([]string, len(u.Args))
	for i, a := range u.Args {
		args[i] = a.String()
	}
	s := "Unnest " + u.Func + "(" + strings.Join(args, ", ") + ")"
	if u.Ord != nil {
		s += " WITH ORDINALITY"
	}
	if u.Outer {
		s += " outer"
	}
	return s
}

// DelimScan is where a decorrelated subquery reads the distinct values of
// the outer columns it is correlated on: Join.Delim of the join above
// fills it at run time (exec.DelimJoin).
type DelimScan struct {
	Cols  []Column
	state *exec.DelimState // set when the join is built
}

func (d *DelimScan) Columns() []Column { return d.Cols }
func (d *DelimScan) Children() []Node  { return nil }
func (d *DelimScan) String() string    { return "DelimScan" }

// Delim marks a left join of the outer rows to a decorrelated subquery
// (Right) as a dependent join: its first N conjuncts in On are outer key
// IS NOT DISTINCT FROM subquery key, and Scans read the outer keys'
// distinct values.
type Delim struct {
	N     int
	Scans []*DelimScan
}

package plan

import (
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/scan"
)

// strictPred is one conjunct of a DELETE predicate in a form whose truth
// for every row of a data file can be read off the file's statistics.
type strictPred struct {
	field int // Iceberg field id
	typ   iceberg.Type
	op    string // "=", "<", "<=", ">", ">=", "in", "between", "is_null", "is_not_null"
	lits  []iceberg.Literal
}

// strictForm converts a predicate to strict conjuncts; ok is false when
// any conjunct has another form (then no file is dropped unread).
func strictForm(s *Scan, pred Expr) ([]strictPred, bool) {
	var out []strictPred
	schema := s.Table.Table.Metadata().CurrentSchema()
	field := func(e Expr) (iceberg.NestedField, bool) {
		name, _, ok := fieldOfStats(s, e)
		if !ok {
			return iceberg.NestedField{}, false
		}
		f, ok := schema.FindFieldByName(name)
		if !ok {
			return f, false
		}
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
			return f, true
		}
		return f, false // strings (truncated bounds), floats (NaN) and the rest: no
	}
	for _, c := range conjuncts(pred) {
		fn, ok := c.(*Func)
		if !ok {
			return nil, false
		}
		switch fn.Name {
		case "is_null", "is_not_null":
			f, ok := field(fn.Args[0])
			if !ok {
				return nil, false
			}
			out = append(out, strictPred{field: f.ID, typ: f.Type, op: fn.Name})
		case "=", "<", "<=", ">", ">=":
			op := fn.Name
			col, k := fn.Args[0], fn.Args[1]
			if _, isCol := col.(*ColRef); !isCol {
				col, k, op = k, col, flipped[op]
			}
			f, ok := field(col)
			if !ok {
				return nil, false
			}
			_, ctype, _ := fieldOfStats(s, col)
			lit, ok := icebergLiteral(k, ctype)
			if !ok {
				return nil, false
			}
			if lit, ok = convertLit(lit, f.Type); !ok {
				return nil, false
			}
			out = append(out, strictPred{field: f.ID, typ: f.Type, op: op, lits: []iceberg.Literal{lit}})
		case "in", "between":
			f, ok := field(fn.Args[0])
			if !ok {
				return nil, false
			}
			_, ctype, _ := fieldOfStats(s, fn.Args[0])
			p := strictPred{field: f.ID, typ: f.Type, op: fn.Name}
			for _, a := range fn.Args[1:] {
				lit, ok := icebergLiteral(a, ctype)
				if !ok {
					return nil, false
				}
				if lit, ok = convertLit(lit, f.Type); !ok {
					return nil, false
				}
				p.lits = append(p.lits, lit)
			}
			out = append(out, p)
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

func convertLit(l iceberg.Literal, t iceberg.Type) (iceberg.Literal, bool) {
	c, err := l.To(t)
	if err != nil {
		return nil, false
	}
	switch c.(type) {
	case iceberg.Int32Literal, iceberg.Int64Literal, iceberg.DateLiteral, iceberg.TimestampLiteral:
		return c, true
	}
	return nil, false
}

// ints are the integers behind p's literals.
func (p strictPred) ints() ([]int64, bool) {
	vals := make([]int64, len(p.lits))
	for i, x := range p.lits {
		v, ok := scan.LiteralInt(x)
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

// allMatch reports whether statistics prove that every row of df
// satisfies every conjunct.
func allMatch(preds []strictPred, df iceberg.DataFile) bool {
	if len(preds) == 0 {
		return false
	}
	nulls := df.NullValueCounts()
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	for _, p := range preds {
		n, hasNulls := nulls[p.field]
		switch p.op {
		case "is_null":
			if !hasNulls || n != df.Count() {
				return false
			}
			continue
		case "is_not_null":
			if !hasNulls || n != 0 {
				return false
			}
			continue
		}
		if !hasNulls || n != 0 {
			return false
		}
		lb, ok1 := lower[p.field]
		ub, ok2 := upper[p.field]
		if !ok1 || !ok2 {
			return false
		}
		lo, err1 := boundLiteral(p.typ, lb)
		hi, err2 := boundLiteral(p.typ, ub)
		if err1 != nil || err2 != nil {
			return false
		}
		l, ok1 := scan.LiteralInt(lo)
		h, ok2 := scan.LiteralInt(hi)
		if !ok1 || !ok2 {
			return false
		}
		vals, ok := p.ints()
		if !ok {
			return false
		}
		var holds bool
		switch p.op {
		case "=":
			holds = l == vals[0] && h == vals[0]
		case "<":
			holds = h < vals[0]
		case "<=":
			holds = h <= vals[0]
		case ">":
			holds = l > vals[0]
		case ">=":
			holds = l >= vals[0]
		case "between":
			holds = l >= vals[0] && h <= vals[1]
		case "in":
			if l == h {
				for _, v := range vals {
					holds = holds || v == l
				}
			}
		}
		if !holds {
			return false
		}
	}
	return true
}

// AllMatch reports whether the rewrite's predicate holds for every row of
// df by its statistics alone, or because there is none, so a DELETE can
// drop the file unread.
func (r *Rewrite) AllMatch(df iceberg.DataFile) bool { return r.every || allMatch(r.strict, df) }

// Row groups. A DELETE's or UPDATE's conjuncts of the strict form (a
// column of an integer, date or timestamp type against constants) tell
// from a Parquet row group's statistics that none of its rows can match:
// a row group whose rows all fail one conjunct cannot. A copy-on-write
// rewrite then copies such a row group without reading it
// (mergeinto.RewriteSpec.RowGroupFilter).

// inclusiveForm is the conjuncts of pred that have the strict form, each
// alone; the others are left out (each conjunct must hold for a row to
// match, so any subset excludes soundly).
func inclusiveForm(s *Scan, pred Expr) []strictPred {
	var out []strictPred
	for _, c := range conjuncts(pred) {
		if ps, ok := strictForm(s, c); ok {
			out = append(out, ps...)
		}
	}
	return out
}

// rowWise reports whether n evaluates row by row, in its input's order:
// only projections and filters over the source, no join.
func rowWise(n Node) bool {
	switch n.(type) {
	case *Project, *Filter, *SourceScan:
	default:
		return false
	}
	for _, c := range n.Children() {
		if !rowWise(c) {
			return false
		}
	}
	return true
}

// rowGroupFilter is RewriteSpec.RowGroupFilter: nil when no conjunct
// can exclude a row group, or when the plan may reorder rows.
func (r *Rewrite) rowGroupFilter() func(*metadata.FileMetaData, int) bool {
	if len(r.inclusive) == 0 || !r.ordered {
		return nil
	}
	preds := r.inclusive
	return func(meta *metadata.FileMetaData, rg int) bool { return mayMatchRowGroup(preds, meta, rg) }
}

// mayMatchRowGroup reports whether a row of row group rg of the file
// whose footer is meta may satisfy every conjunct, by the row group's
// statistics: false only when one conjunct is false for all its rows.
// A column the footer does not describe plainly (no field id, no
// statistics, unsigned or non-microsecond timestamps, another physical
// type) proves nothing.
func mayMatchRowGroup(preds []strictPred, meta *metadata.FileMetaData, rg int) bool {
	if rg < 0 || rg >= meta.NumRowGroups() {
		return true
	}
	g := meta.RowGroup(rg)
	rows := g.NumRows()
	for _, p := range preds {
		col := scan.TopLeaf(meta.Schema, p.field)
		if col < 0 {
			continue
		}
		cc, err := g.ColumnChunk(col)
		if err != nil {
			continue
		}
		ok, err := cc.StatsSet()
		if err != nil || !ok {
			continue
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() {
			continue
		}
		nulls := st.NullCount()
		switch p.op {
		case "is_null":
			if nulls == 0 {
				return false
			}
			continue
		case "is_not_null":
			if nulls == rows {
				return false
			}
			continue
		}
		if nulls == rows {
			return false // every row NULL: no comparison holds
		}
		lo, hi, ok := scan.StatsInts(meta.Schema.Column(col), st, p.typ)
		if !ok {
			continue
		}
		vals, ok := p.ints()
		if !ok {
			continue
		}
		var may bool
		switch p.op {
		case "=":
			may = lo <= vals[0] && vals[0] <= hi
		case "<":
			may = lo < vals[0]
		case "<=":
			may = lo <= vals[0]
		case ">":
			may = hi > vals[0]
		case ">=":
			may = hi >= vals[0]
		case "between":
			may = hi >= vals[0] && lo <= vals[1]
		case "in":
			for _, v := range vals {
				may = may || (lo <= v && v <= hi)
			}
		default:
			may = true
		}
		if !may {
			return false
		}
	}
	return true
}

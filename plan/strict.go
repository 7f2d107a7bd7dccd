package plan

import (
	"github.com/apache/iceberg-go"
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

// litInt reads the integer behind an Int32, Int64, Date or Timestamp
// literal.
func icebergInt(l iceberg.Literal) (int64, bool) {
	switch v := l.(type) {
	case iceberg.Int32Literal:
		return int64(v), true
	case iceberg.Int64Literal:
		return int64(v), true
	case iceberg.DateLiteral:
		return int64(v), true
	case iceberg.TimestampLiteral:
		return int64(v), true
	}
	return 0, false
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
		l, ok1 := icebergInt(lo)
		h, ok2 := icebergInt(hi)
		if !ok1 || !ok2 {
			return false
		}
		vals := make([]int64, len(p.lits))
		for i, x := range p.lits {
			v, ok := icebergInt(x)
			if !ok {
				return false
			}
			vals[i] = v
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
// df by its statistics alone, so a DELETE can drop the file unread.
func (r *Rewrite) AllMatch(df iceberg.DataFile) bool { return allMatch(r.strict, df) }

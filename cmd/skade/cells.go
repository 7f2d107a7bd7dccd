package main

import (
	"context"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
)

// cell is one value as the shell prints it.
type cell struct {
	text string
	null bool
}

// column describes a result column for the renderers.
type column struct {
	name    string
	typ     string // SQL type name, as the engine names it
	numeric bool   // right-aligned in tables, unquoted in JSON
	boolean bool   // unquoted in JSON
}

func columnsOf(s *arrow.Schema) []column {
	cols := make([]column, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = column{name: f.Name, typ: exec.TypeName(f.Type), numeric: isNumeric(f.Type), boolean: f.Type.ID() == arrow.BOOL}
	}
	return cols
}

func isNumeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// columnText renders a column's values the way the engine casts them to
// text, so that the shell prints what `CAST(x AS VARCHAR)` would.
func columnText(ctx context.Context, a arrow.Array) ([]cell, error) {
	out := make([]cell, a.Len())
	switch c := a.(type) {
	case *array.Boolean:
		for i := range out {
			out[i].text = strconv.FormatBool(c.Value(i))
		}
	case *array.Float32:
		for i := range out {
			out[i].text = formatFloat(float64(c.Value(i)), 32)
		}
	case *array.Float64:
		for i := range out {
			out[i].text = formatFloat(c.Value(i), 64)
		}
	case *array.String:
		for i := range out {
			out[i].text = c.Value(i)
		}
	case *array.Null:
		for i := range out {
			out[i] = cell{text: "NULL", null: true}
		}
		return out, nil
	default:
		cast, err := exec.NewCast(&exec.Column{Index: 0, Type: a.DataType()}, arrow.BinaryTypes.String, false)
		if err != nil {
			// A type the engine cannot cast to text: fall back to Arrow's own rendering.
			for i := range out {
				out[i].text = a.ValueStr(i)
			}
			break
		}
		batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
		defer batch.Release()
		s, err := cast.Eval(exec.NewEvalContext(ctx), batch)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		for i := range out {
			if b, ok := s.(*array.Binary); ok {
				out[i].text = string(b.Value(i))
			} else {
				out[i].text = s.ValueStr(i)
			}
		}
	}
	for i := range out {
		if a.IsNull(i) {
			out[i] = cell{text: "NULL", null: true}
		}
	}
	return out, nil
}

// formatFloat prints a float as PostgreSQL does (exec.AppendFloat):
// 1767225600, not 1.7672256e+09.
func formatFloat(v float64, bits int) string {
	return string(exec.AppendFloat(nil, v, bits))
}

// batchRows turns a batch into rows of cells.
func batchRows(ctx context.Context, b arrow.RecordBatch) ([][]cell, error) {
	cols := make([][]cell, b.NumCols())
	for i, a := range b.Columns() {
		c, err := columnText(ctx, a)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	rows := make([][]cell, b.NumRows())
	for r := range rows {
		row := make([]cell, len(cols))
		for c := range cols {
			row[c] = cols[c][r]
		}
		rows[r] = row
	}
	return rows, nil
}

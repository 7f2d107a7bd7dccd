package driver

import (
	"database/sql/driver"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
)

// Rows streams a result batch by batch.
type Rows struct {
	res    *lake.Result
	rdr    array.RecordReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
	row    int
}

var (
	_ driver.Rows                           = (*Rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
)

func newRows(res *lake.Result) *Rows {
	return &Rows{res: res, rdr: res.Reader(), schema: res.Schema()}
}

func (r *Rows) Columns() []string {
	names := make([]string, r.schema.NumFields())
	for i, f := range r.schema.Fields() {
		names[i] = f.Name
	}
	return names
}

func (r *Rows) Close() error {
	if r.rdr != nil {
		r.rdr.Release()
		r.rdr = nil
	}
	return r.res.Close()
}

func (r *Rows) Next(dest []driver.Value) error {
	for r.cur == nil || r.row >= int(r.cur.NumRows()) {
		if r.rdr == nil || !r.rdr.Next() {
			if r.rdr != nil {
				if err := r.rdr.Err(); err != nil {
					return err
				}
			}
			return io.EOF
		}
		r.cur, r.row = r.rdr.RecordBatch(), 0
	}
	for j := range dest {
		dest[j] = value(r.cur.Column(j), r.schema.Field(j).Type, r.row)
	}
	r.row++
	return nil
}

// value converts row i of a column to a driver.Value.
func value(a arrow.Array, declared arrow.DataType, i int) driver.Value {
	if a.IsNull(i) {
		return nil
	}
	switch c := a.(type) {
	case *array.Boolean:
		return c.Value(i)
	case *array.Int8:
		return int64(c.Value(i))
	case *array.Int16:
		return int64(c.Value(i))
	case *array.Int32:
		return int64(c.Value(i))
	case *array.Int64:
		return c.Value(i)
	case *array.Uint8:
		return int64(c.Value(i))
	case *array.Uint16:
		return int64(c.Value(i))
	case *array.Uint32:
		return int64(c.Value(i))
	case *array.Float32:
		return float64(c.Value(i))
	case *array.Float64:
		return c.Value(i)
	case *array.String:
		return c.Value(i)
	case *array.LargeString:
		return c.Value(i)
	case *array.Binary:
		if declared.ID() == arrow.STRING {
			return string(c.Value(i))
		}
		return append([]byte(nil), c.Value(i)...)
	case *array.Decimal128:
		// numeric's text, its scale's digits kept (12.50)
		return c.Value(i).ToString(c.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return c.Value(i).ToTime().UTC()
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		return c.Value(i).ToTime(unit).UTC()
	}
	// DECIMAL, UUID, INTERVAL, TIME and nested values: their text
	return a.ValueStr(i)
}

func (r *Rows) ColumnTypeDatabaseTypeName(i int) string {
	return strings.ToUpper(exec.TypeName(r.schema.Field(i).Type))
}

func (r *Rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	return r.schema.Field(i).Nullable, true
}

func (r *Rows) ColumnTypeScanType(i int) reflect.Type {
	switch r.schema.Field(i).Type.ID() {
	case arrow.BOOL:
		return reflect.TypeFor[bool]()
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return reflect.TypeFor[int64]()
	case arrow.FLOAT32, arrow.FLOAT64:
		return reflect.TypeFor[float64]()
	case arrow.BINARY:
		return reflect.TypeFor[[]byte]()
	case arrow.DATE32, arrow.TIMESTAMP:
		return reflect.TypeFor[time.Time]()
	}
	return reflect.TypeFor[string]()
}

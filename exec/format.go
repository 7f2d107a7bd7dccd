package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Text output in Postgres's format, for the CLI, result printing and the
// sqllogictest runner, so that every layer renders values the way a cast
// to text does.

// TextFormatter renders the rows of one array.
type TextFormatter struct {
	arr arrow.Array
	app appender
}

// NewTextFormatter prepares a formatter for a. It fails for types with
// no text form (nested types).
func NewTextFormatter(a arrow.Array) (*TextFormatter, error) {
	if a.DataType().ID() == arrow.NULL {
		return &TextFormatter{arr: a}, nil
	}
	f := textFormatter(a.DataType())
	if f == nil {
		return nil, fmt.Errorf("exec: no text form for type %s", TypeName(a.DataType()))
	}
	return &TextFormatter{arr: a, app: f(a)}, nil
}

// IsNull reports whether row i is NULL.
func (f *TextFormatter) IsNull(i int) bool {
	return f.app == nil || f.arr.IsNull(i)
}

// Append appends row i's text to dst; a NULL appends nothing, so check
// IsNull to print NULLs your way.
func (f *TextFormatter) Append(dst []byte, i int) []byte {
	if f.IsNull(i) {
		return dst
	}
	return f.app(dst, i)
}

// String returns row i's text, or "NULL".
func (f *TextFormatter) String(i int) string {
	if f.IsNull(i) {
		return "NULL"
	}
	return string(f.app(nil, i))
}

// LiteralSQL renders a literal as SQL that reads back as the same value
// and type, the way Postgres's EXPLAIN shows constants: numbers and
// booleans bare, text quoted, other types as '...'::type.
func LiteralSQL(l *Literal) string {
	s := l.Value
	if !s.IsValid() {
		if isNull(s.DataType()) {
			return "NULL"
		}
		return "NULL::" + TypeName(s.DataType())
	}
	arr, err := scalarArray(s, 1, memory.DefaultAllocator)
	if err != nil {
		return l.String()
	}
	defer arr.Release()
	f, err := NewTextFormatter(arr)
	if err != nil {
		return l.String()
	}
	text := f.String(0)
	dt := s.DataType()
	switch {
	case isInteger(dt) && dt.ID() != arrow.INT8 && dt.ID() != arrow.INT16, dt.ID() == arrow.BOOL:
		return text
	case isDecimal(dt) && dt.(*arrow.Decimal128Type).Scale > 0:
		return text
	case isString(dt):
		return "'" + strings.ReplaceAll(text, "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(text, "'", "''") + "'::" + TypeName(dt)
}

package lake_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A registered Arrow batch's columns of types SQL has no operators for
// compute as the type they widen to, without loss: a dictionary of
// strings (Arrow IPC, pandas' categoricals) as text, unsigned integers as
// the next signed type (UBIGINT as numeric(20)), float16 as real, and a
// nanosecond timestamp in any zone as timestamptz cut to microseconds.
// Each is compared, grouped, joined, aggregated and written to a table.
// Before, the dictionary, unsigned and float16 columns were refused by
// comparisons, GROUP BY or INSERT, a UBIGINT past 2^63 failed CREATE
// TABLE AS, and a nanosecond digit failed every query of the batch.
func TestRegisteredArrowTypesWiden(t *testing.T) {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Berlin"}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	cat := b.Field(1).(*array.BinaryDictionaryBuilder)
	for _, v := range []string{"red", "blue", "red"} {
		if err := cat.AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	b.Field(2).(*array.Uint8Builder).AppendValues([]uint8{255, 1, 255}, nil)
	b.Field(3).(*array.Uint32Builder).AppendValues([]uint32{1 << 31, 7, 1 << 31}, nil)
	b.Field(4).(*array.Uint64Builder).AppendValues([]uint64{1<<64 - 1, 5, 1<<64 - 1}, nil)
	b.Field(5).(*array.Float16Builder).AppendValues([]float16.Num{float16.New(1.5), float16.New(-2), float16.New(1.5)}, nil)
	b.Field(6).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_700_000_000_123_456_789, 0, 1_700_000_000_123_456_001}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	lk := sqlLake(t)
	s := lk.Session()
	if err := s.RegisterBatch(ctx, "inc", rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT cat, count(*), sum(u8), max(u32), min(u64), sum(h) FROM inc GROUP BY cat ORDER BY cat",
			"blue|1|1|7|5|-2;red|2|510|2147483648|18446744073709551615|3"},
		{"SELECT a.k, b.k FROM inc a JOIN inc b ON a.cat = b.cat AND a.u64 = b.u64 AND a.ts = b.ts WHERE a.k < b.k", "1|3"},
		{"SELECT k FROM inc WHERE cat = 'red' AND u8 = 255 AND u32 > 2147483647 AND u64 = 18446744073709551615 AND h = 1.5 ORDER BY k", "1;3"},
		{"SELECT ts FROM inc WHERE k = 1", "2023-11-14T22:13:20.123456Z"},
	} {
		if got := query(t, s, c.q); !slices.Equal(got, splitRows(c.want)) {
			t.Errorf("%s: %v, want %s", c.q, got, c.want)
		}
	}
	mustExec(t, s, "CREATE TABLE t AS SELECT * FROM inc; INSERT INTO t SELECT * FROM inc")
	if got := query(t, s, "SELECT cat, u8, u32, u64, h, ts FROM t WHERE k = 1"); !slices.Equal(got, []string{
		"red|255|2147483648|18446744073709551615|1.5|2023-11-14T22:13:20.123456Z",
		"red|255|2147483648|18446744073709551615|1.5|2023-11-14T22:13:20.123456Z"}) {
		t.Errorf("written: %v", got)
	}
}

func splitRows(s string) []string { return strings.Split(s, ";") }

package scan

import (
	"encoding/binary"
	"testing"

	"github.com/apache/iceberg-go"
)

// plainStrings reads PLAIN byte arrays and refuses truncated ones.
func TestPlainStrings(t *testing.T) {
	var b []byte
	for _, s := range []string{"old", "", "ñew"} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	got, ok := plainStrings(b, 3, nil)
	if !ok || len(got) != 3 || got[0] != "old" || got[1] != "" || got[2] != "ñew" {
		t.Fatalf("%q %v", got, ok)
	}
	for _, cut := range []int{2, 5, len(b) - 1} {
		if _, ok := plainStrings(b[:cut], 3, nil); ok {
			t.Fatalf("%d bytes read as 3 values", cut)
		}
	}
	if _, ok := plainStrings(b, 4, nil); ok {
		t.Fatal("4 values read from 3")
	}
}

// settle says what a row group's dictionary values decide for the whole
// filter: every row passes, none, or it depends on the row; a NULL that
// may be among the rows counts as a value.
func TestSettle(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.String})
	s, k := iceberg.Reference("s"), iceberg.Reference("k")
	for _, tc := range []struct {
		filter iceberg.BooleanExpression
		s, k   []string
		sNull  bool
		want   settled
	}{
		{iceberg.EqualTo(s, "old"), []string{"old"}, nil, false, settledYes},
		{iceberg.EqualTo(s, "old"), []string{"old"}, nil, true, settledMaybe},
		{iceberg.EqualTo(s, "x"), []string{"old", "new"}, nil, true, settledNo},
		{iceberg.EqualTo(s, "old"), []string{"old", "new"}, nil, false, settledMaybe},
		{iceberg.IsNull(s), []string{"old"}, nil, false, settledNo},
		{iceberg.NotNull(s), []string{"old"}, nil, false, settledYes},
		{iceberg.NewAnd(iceberg.EqualTo(s, "old"), iceberg.EqualTo(k, "x")), []string{"old"}, []string{"y"}, false, settledNo},
		{iceberg.NewOr(iceberg.EqualTo(s, "nope"), iceberg.EqualTo(k, "x")), []string{"old"}, []string{"x"}, false, settledYes},
		{iceberg.NewOr(iceberg.EqualTo(s, "nope"), iceberg.EqualTo(k, "x")), []string{"old"}, []string{"x", "y"}, false, settledMaybe},
		{iceberg.NotEqualTo(s, "a"), []string{"b"}, nil, true, settledYes}, // a superset: NULL passes <>
	} {
		df := compileDictFilter(tc.filter, sch, []string{"s"})
		if df == nil {
			t.Fatalf("%s: not compiled", tc.filter)
		}
		d := &dictFile{df: df, nulls: make([]bool, len(df.ids)), pageDict: make([][]string, len(df.ids))}
		for c, id := range df.ids {
			if id == 1 {
				d.pageDict[c], d.nulls[c] = tc.s, tc.sNull
			} else {
				d.pageDict[c] = tc.k
			}
		}
		if got := d.settle(df.root); got != tc.want {
			t.Errorf("%s on %q, %q (NULL %v): %d, want %d", tc.filter, tc.s, tc.k, tc.sNull, got, tc.want)
		}
	}
}

package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestTypeFromSQL(t *testing.T) {
	tests := []struct {
		name   string
		params []int
		want   arrow.DataType
		err    string
	}{
		{"INTEGER", nil, tInt32, ""},
		{"int8", nil, tInt64, ""},
		{"DOUBLE", nil, tFloat64, ""},
		{"DECIMAL", []int{10, 2}, decType(10, 2), ""},
		{"NUMERIC", []int{5}, decType(5, 0), ""},
		{"DECIMAL", nil, decType(18, 3), ""},
		{"VARCHAR", []int{20}, tString, ""},
		{"TIMESTAMPTZ", nil, tTimestampTZ, ""},
		{"timestamp", nil, tTimestamp, ""},
		{"BLOB", nil, tBinary, ""},
		{"DECIMAL", []int{40, 2}, nil, "NUMERIC precision 40 must be between 1 and 38"},
		{"DECIMAL", []int{5, 6}, nil, "NUMERIC scale 6 must be between 0 and precision 5"},
		{"INTEGER", []int{3}, nil, "type integer does not take parameters"},
		{"GEOGRAPHY", nil, nil, `type "geography" does not exist`},
	}
	for _, tc := range tests {
		got, err := TypeFromSQL(tc.name, tc.params)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s%v: got %v, %v; want %q", tc.name, tc.params, got, err, tc.err)
			}
			continue
		}
		if err != nil || !arrow.TypeEqual(got, tc.want) {
			t.Errorf("%s%v: got %v, %v; want %v", tc.name, tc.params, got, err, tc.want)
		}
	}
}

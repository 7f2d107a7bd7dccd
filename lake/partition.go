package lake

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/plan"
)

// Partition is one field of a table's partition spec: a source column and
// the transform applied to it.
type Partition struct {
	Column string
	// Transform is identity, year, month, day, hour, bucket or truncate.
	Transform string
	// Param is the bucket count or the truncate width.
	Param int
}

func (p Partition) String() string {
	switch p.Transform {
	case "identity", "":
		return p.Column
	case "bucket", "truncate":
		return fmt.Sprintf("%s(%d, %s)", p.Transform, p.Param, p.Column)
	default:
		return fmt.Sprintf("%s(%s)", p.Transform, p.Column)
	}
}

// ParsePartition parses "col", "day(ts)", "bucket(16, id)" or
// "truncate(4, s)".
func ParsePartition(s string) (Partition, error) {
	bad := func(why string) (Partition, error) {
		return Partition{}, &sentinelError{ErrInvalidArgument, fmt.Errorf("invalid partition field %q: %s; write col, year(col), month(col), day(col), hour(col), bucket(N, col) or truncate(W, col)", s, why)}
	}
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if s == "" {
			return bad("it is empty")
		}
		return Partition{Column: s, Transform: "identity"}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return bad("missing closing parenthesis")
	}
	fn := strings.ToLower(strings.TrimSpace(s[:open]))
	args := strings.Split(s[open+1:len(s)-1], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	switch fn {
	case "identity", "year", "month", "day", "hour", "years", "months", "days", "hours":
		if len(args) != 1 || args[0] == "" {
			return bad(fn + " takes one column")
		}
		return Partition{Column: args[0], Transform: strings.TrimSuffix(fn, "s")}, nil
	case "bucket", "truncate":
		if len(args) != 2 {
			return bad(fn + " takes a number and a column")
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return bad(fmt.Sprintf("%s needs a positive whole number first, not %q", fn, args[0]))
		}
		return Partition{Column: args[1], Transform: fn, Param: n}, nil
	}
	return bad(fmt.Sprintf("unknown transform %q", fn))
}

// transform returns the Iceberg transform and the partition field's name
// (plan.PartitionTransform).
func (p Partition) transform() (iceberg.Transform, string, error) {
	return plan.PartitionTransform(p.Transform, p.Param, p.Column)
}

// buildSpec validates partition fields against the schema.
func buildSpec(schema *iceberg.Schema, parts []Partition) (*iceberg.PartitionSpec, error) {
	if len(parts) == 0 {
		spec := iceberg.NewPartitionSpec()
		return &spec, nil
	}
	var opts []iceberg.PartitionOption
	names := map[string]bool{}
	for i, p := range parts {
		field, ok := schema.FindFieldByNameCaseInsensitive(p.Column)
		if !ok {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("partition field %s: column %q does not exist", p, p.Column)}
		}
		tr, name, err := p.transform()
		if err != nil {
			return nil, &sentinelError{ErrInvalidArgument, err}
		}
		if !tr.CanTransform(field.Type) {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("partition field %s: %s cannot be applied to column %q of type %s", p, p.Transform, field.Name, field.Type)}
		}
		if names[name] {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("partition field %s appears twice", p)}
		}
		names[name] = true
		id := iceberg.PartitionDataIDStart + i
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(field.ID, name, tr, schema, &id))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, errors.Join(errors.New("invalid partition spec"), err)}
	}
	return &spec, nil
}

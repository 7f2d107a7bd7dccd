package lake

import (
	"context"
	"fmt"
	"strings"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// call runs CALL procedure(args), Spark's spelling: register_table(table,
// metadata_file) adopts an Iceberg table whose metadata file lies in the
// lake (a table dropped with its files kept, or one another engine wrote
// into the lake directory); fast_forward(table, branch, to) publishes a
// branch (see fastForward). The table's maintenance procedures are ALTER
// TABLE … EXECUTE.
func (s *Session) call(ctx context.Context, st *parser.Call) (*Result, error) {
	name := strings.ToLower(st.Name.Last().Name)
	procs := []string{"register_table", "fast_forward"}
	switch name {
	case "fast_forward":
		args, err := procedureArgs(name, st, []string{"table", "branch", "to"})
		if err != nil {
			return nil, err
		}
		return s.fastForward(ctx, args)
	case "register_table":
	default:
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("procedure %s does not exist%s; the procedures are register_table and fast_forward (table maintenance is ALTER TABLE … EXECUTE)", st.Name, plan.DidYouMean(name, procs))}
	}
	if s.tx != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("register_table cannot run inside a transaction; run it outside BEGIN … COMMIT")}
	}
	args, err := procedureArgs(name, st, []string{"table", "metadata_file"})
	if err != nil {
		return nil, err
	}
	id, err := s.lk.ident(args["table"])
	if err != nil {
		return nil, err
	}
	if _, err := s.lk.cat.RegisterTable(ctx, id, args["metadata_file"]); err != nil {
		return nil, translate(fmt.Errorf("register_table %s: %w", displayName(id), err))
	}
	return textResult("result", []string{fmt.Sprintf("registered %s at %s", displayName(id), args["metadata_file"])})
}

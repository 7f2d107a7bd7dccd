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
// into the lake directory). The table's maintenance procedures are ALTER
// TABLE … EXECUTE.
func (s *Session) call(ctx context.Context, st *parser.Call) (*Result, error) {
	name := strings.ToLower(st.Name.Last().Name)
	if name != "register_table" {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("procedure %s does not exist%s; the procedure is register_table (table maintenance is ALTER TABLE … EXECUTE)", st.Name, plan.DidYouMean(name, []string{"register_table"}))}
	}
	if s.tx != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("register_table cannot run inside a transaction; run it outside BEGIN … COMMIT")}
	}
	args := map[string]string{}
	order := []string{"table", "metadata_file"}
	for i, a := range st.Args {
		key := ""
		if na, ok := a.(*parser.NamedArg); ok {
			key, a = strings.ToLower(na.Name.Name), na.Value
		} else if i < len(order) {
			key = order[i]
		}
		lit, ok := a.(*parser.Literal)
		if key == "" || !ok || lit.Kind != parser.LitString {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("register_table takes two strings: table => 'name', metadata_file => 'path'")}
		}
		args[key] = lit.Value
	}
	if len(args) != 2 || args["table"] == "" || args["metadata_file"] == "" {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("register_table takes two strings: table => 'name', metadata_file => 'path'")}
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

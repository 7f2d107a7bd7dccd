package lake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// tableName renders a parsed name for the lake's name functions.
func tableName(n parser.Name) string {
	parts := make([]string, len(n))
	for i, id := range n {
		p := id.Name
		if !id.Quoted {
			p = strings.ToLower(p)
		}
		if strings.ContainsAny(p, ".\"") {
			p = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

func (s *Session) tableExists(ctx context.Context, name string) (bool, error) {
	_, err := s.table(ctx, name)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrTableNotFound) {
		return false, nil
	}
	return false, err
}

// table returns a handle on the named table as this session sees it: the
// transaction's copy inside one, the committed table otherwise.
func (s *Session) table(ctx context.Context, name string) (*Table, error) {
	if s.tx == nil {
		return s.lk.Table(ctx, name)
	}
	id, err := s.lk.ident(name)
	if err != nil {
		return nil, err
	}
	tbl, err := s.tx.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.lk.newTable(id, tbl, tbl.CurrentSnapshot()), nil
}

// createTable runs CREATE TABLE in the session's transaction, or in one of
// its own: OR REPLACE and … AS then take effect whole or not at all.
func (s *Session) createTable(ctx context.Context, st *parser.CreateTable, now time.Time) (*Result, error) {
	if st.Clone != nil {
		return s.cloneTable(ctx, st)
	}
	if st.Temporary {
		return s.createTemp(ctx, st, now)
	}
	return s.autocommit(ctx, func() (*Result, error) { return s.createTableTx(ctx, st, now) })
}

func (s *Session) createTableTx(ctx context.Context, st *parser.CreateTable, now time.Time) (*Result, error) {
	name := tableName(st.Name)
	ps, err := s.planner(now).Plan(ctx, st, false)
	if err != nil {
		return nil, err
	}
	c := ps.Create
	var opts []TableOption
	for _, pf := range c.Partitions {
		opts = append(opts, WithPartitions(Partition{Column: pf.Column, Transform: pf.Transform, Param: pf.Param}))
	}
	if len(c.Props) > 0 {
		opts = append(opts, WithProperties(c.Props))
	}
	if c.PrimaryKey != nil {
		opts = append(opts, withIdentifierFields(c.PrimaryKey))
	}
	if c.WriteDefaults != nil {
		opts = append(opts, withWriteDefaults(c.WriteDefaults))
	}
	if _, ok := s.temps[strings.ToLower(name)]; ok && len(st.Name) == 1 {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("create table %s: this session has a temporary table of that name, which would shadow the table; choose another name or DROP TABLE the temporary one", name)}
	}
	if _, ok := s.sources[strings.ToLower(name)]; ok && len(st.Name) == 1 {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("create table %s: the name is registered as a source in this session, which would shadow the table; choose another name or Unregister the source", name)}
	}
	exists, err := s.tableExists(ctx, name)
	if err != nil {
		return nil, err
	}
	if exists && st.IfNotExists {
		return noticeResult([]string{fmt.Sprintf("relation %q already exists, skipping", st.Name.Last().Name)}), nil
	}
	if exists && !st.OrReplace {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("create table %s: the table already exists; use CREATE OR REPLACE TABLE or IF NOT EXISTS", name)}
	}
	if c.Query == nil {
		if _, err := s.stageCreate(ctx, name, c.Schema, opts); err != nil {
			return nil, err
		}
		return emptyResult(), nil
	}
	rdr, err := openQueryRows(ctx, c)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	tbl, err := s.stageCreate(ctx, name, c.Schema, opts)
	if err != nil {
		return nil, err
	}
	n, err := s.appendRows(ctx, tbl, rdr)
	if err != nil {
		return nil, err
	}
	return countResult(n, Metrics{RowsInserted: n}), nil
}

// openQueryRows opens CREATE TABLE … AS's query, its rows in the table's
// schema; the caller releases the reader.
func openQueryRows(ctx context.Context, c *plan.Create) (*opReader, error) {
	op, err := c.Query.Operator()
	if err != nil {
		return nil, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, err
	}
	return newOpReader(ctx, op, c.Schema), nil
}

// stageCreate creates (or replaces) a table in the session's open
// transaction.
func (s *Session) stageCreate(ctx context.Context, name string, schema *arrow.Schema, opts []TableOption) (*Table, error) {
	id, err := s.lk.ident(name)
	if err != nil {
		return nil, err
	}
	ischema, spec, props, err := defineTable(id, schema, s.lk.withDefaults(opts))
	if err != nil {
		return nil, err
	}
	meta, err := s.lk.newTableMetadata(ctx, id, ischema, spec, props)
	if err != nil {
		return nil, err
	}
	e, err := s.tx.create(ctx, id, meta)
	if err != nil {
		return nil, err
	}
	return s.lk.newTable(id, s.tx.table(e), nil), nil
}

func (s *Session) dropTable(ctx context.Context, st *parser.DropTable) (*Result, error) {
	return s.autocommit(ctx, func() (*Result, error) {
		var notices []string
		for _, n := range st.Names {
			if s.dropTemp(n) {
				continue
			}
			id, err := s.lk.ident(tableName(n))
			if err != nil {
				return nil, err
			}
			err = s.tx.drop(ctx, id)
			if errors.Is(err, ErrTableNotFound) && st.IfExists {
				notices = append(notices, fmt.Sprintf("table %q does not exist, skipping", n.Last().Name))
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		return noticeResult(notices), nil
	})
}

func (s *Session) showTables(ctx context.Context, st *parser.ShowTables) (*Result, error) {
	ns := catalog.DefaultNamespace
	if len(st.From) > 0 {
		ns = strings.ToLower(st.From.Last().Name)
	}
	if st.Views {
		views, err := s.lk.cat.ListViews(ctx, ns)
		if err != nil {
			return nil, err
		}
		return textResult("name", views)
	}
	names, err := s.tableNames(ctx)
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, ns+"."); ok {
			rows = append(rows, rest)
		}
	}
	return textResult("name", rows)
}

// tableNames lists the tables as this session sees them: the committed
// ones, with the open transaction's creates and drops applied.
func (s *Session) tableNames(ctx context.Context) ([]string, error) {
	names, err := s.lk.Tables(ctx)
	if err != nil || s.tx == nil {
		return names, err
	}
	for _, e := range s.tx.order {
		n := displayName(e.id)
		i, found := slices.BinarySearch(names, n)
		switch {
		case e.meta == nil && found:
			names = slices.Delete(names, i, i+1)
		case e.meta != nil && !found:
			names = slices.Insert(names, i, n)
		}
	}
	return names, nil
}

// showTblProperties is Spark's SHOW TBLPROPERTIES: the table's
// properties as key and value, by key, or the one asked for.
func (s *Session) showTblProperties(ctx context.Context, st *parser.ShowTblProperties) (*Result, error) {
	ref, err := sessionCatalog{s}.LookupTable(ctx, strings.Split(tableName(st.Table), "."))
	if err != nil {
		return nil, err
	}
	props := plan.TableProperties(ref.Table.Metadata())
	keys := slices.Sorted(maps.Keys(props))
	if st.Key != "" {
		if _, ok := props[st.Key]; !ok {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("table %s has no property %q%s", ref.Name, st.Key, plan.DidYouMean(st.Key, keys))}
		}
		keys = []string{st.Key}
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.BinaryTypes.String}, {Name: "value", Type: arrow.BinaryTypes.String}}, nil)
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k, props[k]}
	}
	batch, err := exec.BuildBatch(memoryAllocator, schema, rows)
	if err != nil {
		return nil, err
	}
	return &Result{schema: schema, batches: []arrow.RecordBatch{batch}}, nil
}

// showCreateTable is SHOW CREATE TABLE: Table.CreateStatement, in the
// column Spark names createtab_stmt.
func (s *Session) showCreateTable(ctx context.Context, st *parser.ShowCreateTable) (*Result, error) {
	ref, err := sessionCatalog{s}.LookupTable(ctx, strings.Split(tableName(st.Table), "."))
	if err != nil {
		return nil, err
	}
	t := s.lk.newTable(ref.Ident, ref.Table, ref.Table.CurrentSnapshot())
	return textResult("createtab_stmt", []string{t.CreateStatement()})
}

func (s *Session) describe(ctx context.Context, st *parser.Describe) (*Result, error) {
	ref, err := sessionCatalog{s}.LookupTable(ctx, strings.Split(tableName(st.Table), "."))
	var cols []plan.TargetColumn
	if errors.Is(err, ErrTableNotFound) {
		// a view: the columns its query yields, as CREATE VIEW recorded them
		id, nerr := catalog.Normalize(strings.Split(tableName(st.Table), "."))
		if nerr != nil {
			return nil, err
		}
		v, verr := s.lk.cat.LoadView(ctx, id)
		if verr != nil {
			return nil, err
		}
		info, verr := viewInfo(id[0], id[1], v)
		if verr != nil {
			return nil, verr
		}
		for _, f := range info.Schema.Fields() {
			cols = append(cols, plan.TargetColumn{Name: f.Name, Type: plan.CanonicalType(f.Type), Required: !f.Nullable})
		}
	} else if err != nil {
		return nil, err
	} else if cols, err = plan.TargetColumns(ref); err != nil {
		return nil, err
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "column_name", Type: arrow.BinaryTypes.String},
		{Name: "column_type", Type: arrow.BinaryTypes.String},
		{Name: "null", Type: arrow.BinaryTypes.String},
	}, nil)
	var rows [][]any
	for _, c := range cols {
		null := "YES"
		if c.Required {
			null = "NO"
		}
		rows = append(rows, []any{c.Name, exec.TypeName(c.Type), null})
	}
	batch, err := exec.BuildBatch(memoryAllocator, schema, rows)
	if err != nil {
		return nil, err
	}
	return &Result{schema: schema, batches: []arrow.RecordBatch{batch}}, nil
}

func (s *Session) set(st *parser.SetVar) (*Result, error) {
	name := strings.ToLower(st.Name.String())
	if !knownSettings[name] && !strings.Contains(name, ".") {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("unrecognized configuration parameter %q", name)}
	}
	if len(st.Values) != 1 {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("SET %s takes one value", name)}
	}
	if _, isDef := st.Values[0].(*parser.Default); isDef {
		delete(s.settings, name)
		return emptyResult(), nil
	}
	v, err := plan.PropertyValue(st.Values[0])
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("SET %s: %w", name, err)}
	}
	if name == "memory_limit" {
		if _, err := parseBytes(v); err != nil {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("SET memory_limit: %w", err)}
		}
	}
	if err := checkTxnSetting(name, v); err != nil {
		return nil, err
	}
	if name == "write_retries" {
		if _, err := parseRetries(v); err != nil {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("SET write_retries: %w", err)}
		}
	}
	s.settings[name] = v
	return emptyResult(), nil
}

// knownSettings are the names SET takes: skade's own, and PostgreSQL's
// session parameters that clients and tools set (kept and shown, most with
// no effect on skade). A name with a dot is a custom placeholder, as in
// PostgreSQL (SET myapp.tenant = 'x').
var knownSettings = map[string]bool{}

func init() {
	for _, n := range []string{
		// skade's
		"memory_limit", "write_retries", "write_branch", "parallel_scans", "statement_timeout", "max_recursive_iterations",
		// what the PostgreSQL server sets per session (server/pgwire)
		"server_version", "server_encoding", "is_superuser", "session_authorization", "integer_datetimes",
		"current_database", "pg_backend_pid",
		// PostgreSQL's, as clients send them
		"application_name", "client_encoding", "datestyle", "timezone", "time zone", "intervalstyle", "extra_float_digits",
		"standard_conforming_strings", "client_min_messages", "search_path", "lock_timeout",
		"idle_in_transaction_session_timeout", "idle_session_timeout", "bytea_output", "transaction_isolation",
		"default_transaction_isolation", "transaction_read_only", "default_transaction_read_only",
		"transaction_deferrable", "default_transaction_deferrable", "role", "jit", "work_mem", "maintenance_work_mem",
		"temp_buffers", "synchronous_commit", "row_security", "lc_messages", "lc_monetary", "lc_numeric", "lc_time",
		"xmloption", "escape_string_warning", "backslash_quote", "array_nulls", "geqo", "max_parallel_workers_per_gather",
		"enable_seqscan", "enable_indexscan", "enable_bitmapscan", "enable_hashjoin", "enable_mergejoin",
		"enable_nestloop", "enable_sort", "random_page_cost", "effective_cache_size", "default_statistics_target",
		"check_function_bodies", "plan_cache_mode", "log_statement", "log_min_duration_statement",
		"default_table_access_method", "quote_all_identifiers", "timezone_abbreviations",
	} {
		knownSettings[n] = true
	}
}

// parseBytes reads a size such as '512MB', '2 GiB' or '1000000'.
func parseBytes(v string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size; write a number of bytes or e.g. '512MB', '2GB'", v)
	}
	return int64(n * float64(mult)), nil
}

func (s *Session) show(st *parser.Show) (*Result, error) {
	if st.All {
		var rows []string
		for k, v := range s.settings {
			rows = append(rows, k+" = "+v)
		}
		slices.Sort(rows)
		return textResult("setting", rows)
	}
	name := strings.ToLower(st.Name.String())
	v, ok := s.settings[name]
	if !ok {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("unrecognized configuration parameter %q", name)}
	}
	return textResult(name, []string{v})
}

// checkTxnSetting refuses the transaction modes skade cannot give.
// Every transaction is snapshot isolation (PostgreSQL's REPEATABLE READ):
// READ COMMITTED and READ UNCOMMITTED are served by it, being weaker;
// SERIALIZABLE is not, and neither is READ ONLY, rather than pretended.
func checkTxnSetting(name, value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch name {
	case "transaction_isolation", "default_transaction_isolation":
		switch v {
		case "read uncommitted", "read committed", "repeatable read":
			return nil
		case "serializable":
			return errSerializable
		}
		return &sentinelError{ErrInvalidArgument, fmt.Errorf("SET %s: %q is not an isolation level; use read committed or repeatable read", name, value)}
	case "transaction_read_only", "default_transaction_read_only":
		switch v {
		case "off", "false", "0":
			return nil
		case "on", "true", "1":
			return errReadOnlyTxn
		}
		return &sentinelError{ErrInvalidArgument, fmt.Errorf("SET %s: %q is not on or off", name, value)}
	}
	return nil
}

var (
	errSerializable = &sentinelError{ErrNotImplemented, errors.New("SERIALIZABLE isolation is not supported: skade's transactions are snapshot isolation (REPEATABLE READ), and a conflicting commit fails; use REPEATABLE READ")}
	errReadOnlyTxn  = &sentinelError{ErrNotImplemented, errors.New("read-only transactions are not supported; use a read-write one")}
)

package pgdiff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// m is one node's fields in libpg_query's JSON output.
type m = map[string]any

// PostgresShapes parses sql with PostgreSQL's grammar and normalises each
// statement.
func PostgresShapes(sql string) ([]string, error) {
	js, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return nil, err
	}
	var tree struct {
		Stmts []struct {
			Stmt m `json:"stmt"`
		} `json:"stmts"`
	}
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		return nil, fmt.Errorf("decode pg_query json: %w", err)
	}
	var out []string
	for _, s := range tree.Stmts {
		out = append(out, pgStmt(s.Stmt))
	}
	return out, nil
}

// node splits {"Kind": {fields}} into its kind and fields.
func node(v any) (string, m) {
	mm, ok := v.(m)
	if !ok || len(mm) != 1 {
		return "", nil
	}
	for k, f := range mm {
		fm, _ := f.(m)
		if fm == nil {
			fm = m{}
		}
		return k, fm
	}
	return "", nil
}

func str(f m, key string) string {
	s, _ := f[key].(string)
	return s
}

func boolean(f m, key string) bool {
	b, _ := f[key].(bool)
	return b
}

func items(f m, key string) []any {
	l, _ := f[key].([]any)
	return l
}

// stringList joins a list of String nodes with dots.
func stringList(l []any) string {
	var parts []string
	for _, it := range l {
		k, f := node(it)
		switch k {
		case "String":
			parts = append(parts, str(f, "sval"))
		case "A_Star":
			parts = append(parts, "*")
		}
	}
	return strings.Join(parts, ".")
}

func rangeVar(f m) string {
	var parts []string
	for _, k := range []string{"catalogname", "schemaname", "relname"} {
		if s := str(f, k); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ".")
}

func pgAlias(v any) string {
	f, ok := v.(m)
	if !ok {
		return ""
	}
	var cols []string
	for _, c := range items(f, "colnames") {
		_, cf := node(c)
		cols = append(cols, str(cf, "sval"))
	}
	return sx("alias", str(f, "aliasname"), list("cols", cols))
}

func pgStmt(v any) string {
	k, f := node(v)
	switch k {
	case "SelectStmt":
		return pgSelect(f)
	case "InsertStmt":
		rel, _ := f["relation"].(m)
		var cols []string
		for _, c := range items(f, "cols") {
			_, cf := node(c)
			cols = append(cols, str(cf, "name"))
		}
		src, dv := "", true
		if f["selectStmt"] != nil {
			src, dv = pgStmt(f["selectStmt"]), false
		}
		return sx("insert", rangeVar(rel), pgWith(f["withClause"]), list("cols", cols), src,
			flagIf("default-values", dv), list("returning", pgTargets(items(f, "returningList"))))
	case "UpdateStmt":
		rel, _ := f["relation"].(m)
		return sx("update", pgWith(f["withClause"]), sx("table", rangeVar(rel), pgAlias(rel["alias"])),
			list("set", pgSets(items(f, "targetList"))), list("from", pgFroms(items(f, "fromClause"))),
			opt("where", pgExpr(f["whereClause"])), list("returning", pgTargets(items(f, "returningList"))))
	case "DeleteStmt":
		rel, _ := f["relation"].(m)
		return sx("delete", pgWith(f["withClause"]), sx("table", rangeVar(rel), pgAlias(rel["alias"])),
			list("using", pgFroms(items(f, "usingClause"))), opt("where", pgExpr(f["whereClause"])),
			list("returning", pgTargets(items(f, "returningList"))))
	case "MergeStmt":
		rel, _ := f["relation"].(m)
		alias := ""
		if a, ok := rel["alias"].(m); ok {
			alias = str(a, "aliasname")
		}
		var cl []string
		for _, c := range items(f, "mergeWhenClauses") {
			_, cf := node(c)
			cl = append(cl, pgMergeClause(cf))
		}
		return sx("merge", pgWith(f["withClause"]), rangeVar(rel), opt("alias", alias),
			opt("using", pgFrom(f["sourceRelation"])), opt("on", pgExpr(f["joinCondition"])), list("when", cl),
			list("returning", pgTargets(items(f, "returningList"))))
	case "TruncateStmt":
		var ts []string
		for _, r := range items(f, "relations") {
			_, rf := node(r)
			ts = append(ts, rangeVar(rf))
		}
		return sx("truncate", ts...)
	case "CreateStmt":
		rel, _ := f["relation"].(m)
		var cols, props []string
		for _, e := range items(f, "tableElts") {
			switch k, cf := node(e); k {
			case "ColumnDef":
				cols = append(cols, pgColumn(cf))
			case "Constraint":
				cols = append(cols, pgConstraint(cf, true))
			}
		}
		for _, o := range items(f, "options") {
			_, of := node(o)
			key := str(of, "defname")
			if ns := str(of, "defnamespace"); ns != "" {
				key = ns + "." + key
			}
			props = append(props, strings.ToLower(key))
		}
		return sx("create-table", rangeVar(rel), flagIf("if-not-exists", boolean(f, "if_not_exists")),
			list("cols", cols), list("with", props))
	case "CreateTableAsStmt":
		into, _ := f["into"].(m)
		rel, _ := into["rel"].(m)
		var props []string
		for _, o := range items(into, "options") {
			_, of := node(o)
			props = append(props, strings.ToLower(str(of, "defname")))
		}
		return sx("create-table", rangeVar(rel), flagIf("if-not-exists", boolean(f, "if_not_exists")),
			list("with", props), opt("as", pgStmt(f["query"])))
	case "DropStmt":
		var ns []string
		for _, o := range items(f, "objects") {
			if k, of := node(o); k == "List" {
				ns = append(ns, stringList(items(of, "items")))
			} else if k == "String" {
				ns = append(ns, str(of, "sval"))
			}
		}
		kind := "drop-table"
		if str(f, "removeType") == "OBJECT_SCHEMA" {
			kind = "drop-schema"
			return sx(kind, flagIf("if-exists", boolean(f, "missing_ok")), strings.Join(ns, " "),
				flagIf("cascade", str(f, "behavior") == "DROP_CASCADE"))
		}
		return sx(kind, flagIf("if-exists", boolean(f, "missing_ok")), list("names", ns),
			flagIf("cascade", str(f, "behavior") == "DROP_CASCADE"))
	case "CreateSchemaStmt":
		return sx("create-schema", str(f, "schemaname"), flagIf("if-not-exists", boolean(f, "if_not_exists")))
	case "AlterTableStmt":
		rel, _ := f["relation"].(m)
		var acts []string
		for _, c := range items(f, "cmds") {
			_, cf := node(c)
			acts = append(acts, pgAlterCmd(cf))
		}
		return sx("alter-table", rangeVar(rel), flagIf("if-exists", boolean(f, "missing_ok")), list("do", acts))
	case "RenameStmt":
		rel, _ := f["relation"].(m)
		act := sx("rename-to", str(f, "newname"))
		if str(f, "renameType") == "OBJECT_COLUMN" {
			act = sx("rename-column", str(f, "subname"), str(f, "newname"))
		}
		return sx("alter-table", rangeVar(rel), flagIf("if-exists", boolean(f, "missing_ok")), list("do", []string{act}))
	case "TransactionStmt":
		switch str(f, "kind") {
		case "TRANS_STMT_BEGIN", "TRANS_STMT_START":
			return sx("begin")
		case "TRANS_STMT_COMMIT":
			return sx("commit")
		case "TRANS_STMT_ROLLBACK":
			return sx("rollback")
		}
	case "ExplainStmt":
		analyze := false
		for _, o := range items(f, "options") {
			_, of := node(o)
			analyze = analyze || str(of, "defname") == "analyze"
		}
		return sx("explain", flagIf("analyze", analyze), pgStmt(f["query"]))
	case "VariableShowStmt":
		return sx("show", str(f, "name"))
	case "CopyStmt":
		rel, _ := f["relation"].(m)
		var cols, opts []string
		for _, c := range items(f, "attlist") {
			_, cf := node(c)
			cols = append(cols, str(cf, "sval"))
		}
		for _, o := range items(f, "options") {
			_, of := node(o)
			opts = append(opts, strings.ToLower(str(of, "defname")))
		}
		q := ""
		if f["query"] != nil {
			q = pgStmt(f["query"])
		}
		return sx("copy", rangeVar(rel), list("cols", cols), q, flagIf("to", !boolean(f, "is_from")),
			quoteStr(str(f, "filename")), list("opts", opts))
	case "VariableSetStmt":
		if str(f, "kind") == "VAR_SET_DEFAULT" {
			return sx("set", str(f, "name"), flagIf("local", boolean(f, "is_local")), "default")
		}
		return sx("set", str(f, "name"), flagIf("local", boolean(f, "is_local")), list("to", pgExprs(items(f, "args"))))
	}
	return sx("unknown-stmt", k)
}

func pgWith(v any) string {
	w, ok := v.(m)
	if !ok {
		return ""
	}
	ctes := []string{flagIf("recursive", boolean(w, "recursive"))}
	for _, c := range items(w, "ctes") {
		_, cf := node(c)
		var cols []string
		for _, col := range items(cf, "aliascolnames") {
			_, colf := node(col)
			cols = append(cols, str(colf, "sval"))
		}
		mat := map[string]string{"CTEMaterializeAlways": "MATERIALIZED", "CTEMaterializeNever": "NOT MATERIALIZED"}[str(cf, "ctematerialized")]
		ctes = append(ctes, sx("cte", str(cf, "ctename"), list("cols", cols), mat, pgStmt(cf["ctequery"])))
	}
	return list("with", ctes)
}

func pgSelect(f m) string {
	var order []string
	for _, s := range items(f, "sortClause") {
		order = append(order, pgSort(s))
	}
	limit := pgExpr(f["limitCount"])
	if limit == sx("null") {
		limit = "" // LIMIT ALL and LIMIT NULL mean no limit
	}
	tail := []string{list("order", order), opt("limit", limit), opt("offset", pgExpr(f["limitOffset"])),
		flagIf("with-ties", str(f, "limitOption") == "LIMIT_OPTION_WITH_TIES")}
	with := pgWith(f["withClause"])
	if op := str(f, "op"); op != "" && op != "SETOP_NONE" {
		name := map[string]string{"SETOP_UNION": "union", "SETOP_EXCEPT": "except", "SETOP_INTERSECT": "intersect"}[op]
		l, _ := f["larg"].(m)
		r, _ := f["rarg"].(m)
		args := []string{with, name, flagIf("all", boolean(f, "all")), pgSelect(l), pgSelect(r)}
		return sx("setop", append(args, tail...)...)
	}
	if vl := items(f, "valuesLists"); vl != nil {
		var rows []string
		for _, r := range vl {
			_, rf := node(r)
			rows = append(rows, sx("row", pgExprs(items(rf, "items"))...))
		}
		return sx("values", append([]string{with, list("rows", rows)}, tail...)...)
	}
	var group, wins []string
	for _, g := range items(f, "groupClause") {
		group = append(group, pgExpr(g))
	}
	for _, w := range items(f, "windowClause") {
		_, wf := node(w)
		wins = append(wins, str(wf, "name"))
	}
	distinct := ""
	if dl := items(f, "distinctClause"); dl != nil {
		distinct = "distinct"
		if len(dl) > 0 && len(dl[0].(m)) > 0 {
			distinct = list("distinct-on", pgExprs(dl))
		}
	}
	args := []string{with, distinct, list("items", pgTargets(items(f, "targetList"))),
		list("from", pgFroms(items(f, "fromClause"))), opt("where", pgExpr(f["whereClause"])),
		list("group", group), opt("having", pgExpr(f["havingClause"])), list("window", wins)}
	return sx("select", append(args, tail...)...)
}

func pgTargets(l []any) []string {
	var out []string
	for _, t := range l {
		_, tf := node(t)
		out = append(out, sx("item", pgExpr(tf["val"]), opt("as", str(tf, "name"))))
	}
	return out
}

func pgSets(l []any) []string {
	var out []string
	for _, t := range l {
		_, tf := node(t)
		name := str(tf, "name")
		if ind := items(tf, "indirection"); ind != nil {
			name += "." + stringList(ind)
		}
		out = append(out, sx("set", name, pgExpr(tf["val"])))
	}
	return out
}

func pgSort(v any) string {
	_, f := node(v)
	nulls := map[string]string{"SORTBY_NULLS_FIRST": "nulls-first", "SORTBY_NULLS_LAST": "nulls-last"}[str(f, "sortby_nulls")]
	return sx("sort", pgExpr(f["node"]), flagIf("desc", str(f, "sortby_dir") == "SORTBY_DESC"), nulls)
}

func pgFroms(l []any) []string {
	var out []string
	for _, t := range l {
		out = append(out, pgFrom(t))
	}
	return out
}

func pgFrom(v any) string {
	k, f := node(v)
	switch k {
	case "RangeVar":
		return sx("table", rangeVar(f), pgAlias(f["alias"]))
	case "RangeSubselect":
		return sx("subquery", flagIf("lateral", boolean(f, "lateral")), pgStmt(f["subquery"]), pgAlias(f["alias"]))
	case "RangeFunction":
		// functions: [[FuncCall, coldeflist]]
		fn := ""
		if fs := items(f, "functions"); len(fs) > 0 {
			_, lf := node(fs[0])
			if its := items(lf, "items"); len(its) > 0 {
				_, cf := node(its[0])
				fn = sx("fn", pgFuncName(items(cf, "funcname")), list("args", pgExprs(items(cf, "args"))))
			}
		}
		return sx("func-table", fn, pgAlias(f["alias"]))
	case "JoinExpr":
		kind := map[string]string{"JOIN_INNER": "inner", "JOIN_LEFT": "left", "JOIN_RIGHT": "right", "JOIN_FULL": "full"}[str(f, "jointype")]
		var using []string
		for _, u := range items(f, "usingClause") {
			_, uf := node(u)
			using = append(using, str(uf, "sval"))
		}
		return sx("join", kind, flagIf("natural", boolean(f, "isNatural")), pgFrom(f["larg"]), pgFrom(f["rarg"]),
			opt("on", pgExpr(f["quals"])), list("using", using), pgAlias(f["alias"]))
	}
	return sx("unknown-table", k)
}

func pgMergeClause(f m) string {
	kind := map[string]string{"MERGE_WHEN_MATCHED": "matched", "MERGE_WHEN_NOT_MATCHED_BY_TARGET": "not-matched",
		"MERGE_WHEN_NOT_MATCHED_BY_SOURCE": "not-matched-by-source"}[str(f, "matchKind")]
	action := ""
	switch str(f, "commandType") {
	case "CMD_UPDATE":
		action = sx("update", list("set", pgSets(items(f, "targetList"))))
	case "CMD_DELETE":
		action = sx("delete")
	case "CMD_INSERT":
		var cols []string
		for _, t := range items(f, "targetList") {
			_, tf := node(t)
			cols = append(cols, str(tf, "name"))
		}
		action = sx("insert", list("cols", cols), list("values", pgExprs(items(f, "values"))))
	case "CMD_NOTHING":
		action = sx("nothing")
	}
	return sx("when", kind, opt("and", pgExpr(f["condition"])), action)
}

func pgColumn(f m) string {
	notNull, pk := false, false
	def := ""
	var cons []string
	for _, c := range items(f, "constraints") {
		_, cf := node(c)
		switch str(cf, "contype") {
		case "CONSTR_NOTNULL":
			notNull = true
		case "CONSTR_PRIMARY":
			pk = true
			cons = append(cons, pgConstraint(cf, false))
		case "CONSTR_DEFAULT":
			def = pgExpr(cf["raw_expr"])
		case "CONSTR_UNIQUE", "CONSTR_CHECK":
			cons = append(cons, pgConstraint(cf, false))
		}
	}
	return sx("col", str(f, "colname"), pgType(f["typeName"]), flagIf("not-null", notNull), opt("default", def), flagIf("pk", pk), list("constraints", cons))
}

// pgConstraint is a CHECK, UNIQUE or PRIMARY KEY constraint's shape; a
// column's lists no keys.
func pgConstraint(f m, table bool) string {
	kind := map[string]string{"CONSTR_CHECK": "check", "CONSTR_UNIQUE": "unique", "CONSTR_PRIMARY": "primary-key"}[str(f, "contype")]
	var keys []string
	if table {
		for _, k := range items(f, "keys") {
			_, kf := node(k)
			keys = append(keys, str(kf, "sval"))
		}
	}
	return sx("constraint", opt("name", str(f, "conname")), kind, opt("check", pgExpr(f["raw_expr"])), list("keys", keys))
}

func pgType(v any) string {
	f, ok := v.(m)
	if !ok {
		return ""
	}
	names := items(f, "names")
	var last string
	if len(names) > 0 {
		_, nf := node(names[len(names)-1])
		last = str(nf, "sval")
	}
	s := canonType(last)
	if tm := items(f, "typmods"); tm != nil {
		var ps []string
		for _, t := range tm {
			ps = append(ps, strings.TrimPrefix(strings.TrimSuffix(pgExpr(t), ")"), "(int "))
		}
		if s != "INTERVAL" {
			s += "(" + strings.Join(ps, ",") + ")"
		}
	}
	return s + strings.Repeat("[]", len(items(f, "arrayBounds")))
}

func pgAlterCmd(f m) string {
	switch str(f, "subtype") {
	case "AT_AddColumn":
		_, cf := node(f["def"])
		return sx("add", flagIf("if-not-exists", boolean(f, "missing_ok")), pgColumn(cf))
	case "AT_DropColumn":
		return sx("drop", flagIf("if-exists", boolean(f, "missing_ok")), str(f, "name"))
	case "AT_AddConstraint":
		_, cf := node(f["def"])
		return sx("add", pgConstraint(cf, true))
	case "AT_DropConstraint":
		return sx("drop-constraint", flagIf("if-exists", boolean(f, "missing_ok")), str(f, "name"))
	case "AT_AlterColumnType":
		_, cf := node(f["def"])
		return sx("type", str(f, "name"), pgType(cf["typeName"]))
	case "AT_SetNotNull":
		return sx("not-null", str(f, "name"), "set")
	case "AT_DropNotNull":
		return sx("not-null", str(f, "name"))
	case "AT_SetRelOptions":
		var ks []string
		for _, o := range items(f, "def") {
			_, of := node(o)
			key := str(of, "defname")
			if ns := str(of, "defnamespace"); ns != "" {
				key = ns + "." + key
			}
			ks = append(ks, strings.ToLower(key))
		}
		if ks == nil {
			// def is a List node in some versions
			_, lf := node(f["def"])
			for _, o := range items(lf, "items") {
				_, of := node(o)
				ks = append(ks, strings.ToLower(str(of, "defname")))
			}
		}
		return sx("set-props", ks...)
	}
	return sx("unknown-action", str(f, "subtype"))
}

func pgExprs(l []any) []string {
	var out []string
	for _, e := range l {
		out = append(out, pgExpr(e))
	}
	return out
}

func pgFuncName(l []any) string {
	n := stringList(l)
	return strings.TrimPrefix(n, "pg_catalog.")
}

func pgExpr(v any) string {
	if v == nil {
		return ""
	}
	k, f := node(v)
	switch k {
	case "A_Const":
		switch {
		case boolean(f, "isnull"):
			return sx("null")
		case f["ival"] != nil:
			iv, _ := f["ival"].(m)
			n, _ := iv["ival"].(float64)
			return sx("int", strconv.FormatInt(int64(n), 10))
		case f["fval"] != nil:
			fv, _ := f["fval"].(m)
			return sx("num", str(fv, "fval"))
		case f["sval"] != nil:
			sv, _ := f["sval"].(m)
			return sx("str", quoteStr(str(sv, "sval")))
		case f["boolval"] != nil:
			bv, _ := f["boolval"].(m)
			return sx("bool", strconv.FormatBool(boolean(bv, "boolval")))
		case f["bsval"] != nil:
			return sx("bitstring")
		}
		return sx("null")
	case "ColumnRef":
		fields := items(f, "fields")
		if len(fields) > 0 {
			if lk, _ := node(fields[len(fields)-1]); lk == "A_Star" {
				return sx("star", stringList(fields[:len(fields)-1]))
			}
		}
		return sx("col", stringList(fields))
	case "ParamRef":
		n, _ := f["number"].(float64)
		return sx("param", strconv.Itoa(int(n)))
	case "A_Expr":
		return pgAExpr(f)
	case "BoolExpr":
		args := pgExprs(items(f, "args"))
		switch str(f, "boolop") {
		case "AND_EXPR":
			return sx("and", args...)
		case "OR_EXPR":
			return sx("or", args...)
		default:
			return sx("not", args...)
		}
	case "NullTest":
		if str(f, "nulltesttype") == "IS_NOT_NULL" {
			return sx("is-not-null", pgExpr(f["arg"]))
		}
		return sx("is-null", pgExpr(f["arg"]))
	case "BooleanTest":
		t := str(f, "booltesttype")
		not := strings.HasPrefix(t, "IS_NOT_")
		what := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(t, "IS_NOT_"), "IS_"))
		return sx("is", flagIf("not", not), what, pgExpr(f["arg"]))
	case "SubLink":
		q := pgStmt(f["subselect"])
		switch str(f, "subLinkType") {
		case "EXISTS_SUBLINK":
			return sx("exists", q)
		case "EXPR_SUBLINK":
			return sx("subquery", q)
		case "ANY_SUBLINK":
			return sx("in-subquery", pgExpr(f["testexpr"]), q)
		}
		return sx("sublink", str(f, "subLinkType"))
	case "CaseExpr":
		var whens []string
		for _, w := range items(f, "args") {
			_, wf := node(w)
			whens = append(whens, sx("when", pgExpr(wf["expr"]), pgExpr(wf["result"])))
		}
		return sx("case", opt("arg", pgExpr(f["arg"])), list("whens", whens), opt("else", pgExpr(f["defresult"])))
	case "TypeCast":
		return sx("cast", pgType(f["typeName"]), pgExpr(f["arg"]))
	case "FuncCall":
		over := ""
		if w, ok := f["over"].(m); ok {
			if name := str(w, "name"); name != "" {
				over = sx("over-name", name)
			} else {
				var order []string
				for _, o := range items(w, "orderClause") {
					order = append(order, pgSort(o))
				}
				fo, _ := w["frameOptions"].(float64)
				over = sx("over", str(w, "refname"), list("partition", pgExprs(items(w, "partitionClause"))),
					list("order", order), flagIf("frame", int(fo) != 1058))
			}
		}
		var order []string
		for _, o := range items(f, "agg_order") {
			order = append(order, pgSort(o))
		}
		return sx("fn", pgFuncName(items(f, "funcname")), flagIf("distinct", boolean(f, "agg_distinct")),
			flagIf("star", boolean(f, "agg_star")), list("args", pgExprs(items(f, "args"))),
			list("order", order), opt("filter", pgExpr(f["agg_filter"])), over)
	case "CoalesceExpr":
		return sx("fn", "coalesce", list("args", pgExprs(items(f, "args"))))
	case "MinMaxExpr":
		name := "greatest"
		if str(f, "op") == "IS_LEAST" {
			name = "least"
		}
		return sx("fn", name, list("args", pgExprs(items(f, "args"))))
	case "SQLValueFunction":
		name := strings.ToLower(strings.TrimPrefix(str(f, "op"), "SVFOP_"))
		return sx("fn", name)
	case "MergeSupportFunc":
		return sx("fn", "merge_action")
	case "NamedArgExpr":
		return sx("named", str(f, "name"), pgExpr(f["arg"]))
	case "A_ArrayExpr":
		return sx("array", pgExprs(items(f, "elements"))...)
	case "A_Indirection":
		idx := ""
		if ind := items(f, "indirection"); len(ind) > 0 {
			_, xf := node(ind[0])
			idx = pgExpr(xf["uidx"])
		}
		return sx("subscript", pgExpr(f["arg"]), idx)
	case "RowExpr":
		return sx("row", pgExprs(items(f, "args"))...)
	case "SetToDefault":
		return sx("default")
	}
	return sx("unknown-expr", k)
}

func pgAExpr(f m) string {
	op := stringList(items(f, "name"))
	op = strings.TrimPrefix(op, "pg_catalog.")
	l, r := pgExpr(f["lexpr"]), pgExpr(f["rexpr"])
	switch str(f, "kind") {
	case "AEXPR_OP":
		if l == "" {
			switch op {
			case "-":
				return sx("neg", r)
			case "+":
				return sx("pos", r)
			}
			return sx("prefix", op, r)
		}
		return sx("op", op, l, r)
	case "AEXPR_DISTINCT":
		return sx("distinct", l, r)
	case "AEXPR_NOT_DISTINCT":
		return sx("not-distinct", l, r)
	case "AEXPR_NULLIF":
		return sx("fn", "nullif", list("args", []string{l, r}))
	case "AEXPR_IN":
		_, lf := node(f["rexpr"])
		return sx("in", flagIf("not", op == "<>"), l, list("list", pgExprs(items(lf, "items"))))
	case "AEXPR_LIKE", "AEXPR_ILIKE":
		pattern, escape := r, ""
		if k, rf := node(f["rexpr"]); k == "FuncCall" && pgFuncName(items(rf, "funcname")) == "like_escape" {
			args := items(rf, "args")
			pattern, escape = pgExpr(args[0]), pgExpr(args[1])
		}
		return sx("like", flagIf("not", strings.HasPrefix(op, "!")), flagIf("ilike", str(f, "kind") == "AEXPR_ILIKE"), l, pattern, opt("escape", escape))
	case "AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN", "AEXPR_BETWEEN_SYM", "AEXPR_NOT_BETWEEN_SYM":
		kind := str(f, "kind")
		_, lf := node(f["rexpr"])
		b := pgExprs(items(lf, "items"))
		for len(b) < 2 {
			b = append(b, "")
		}
		return sx("between", flagIf("not", strings.Contains(kind, "NOT")), flagIf("symmetric", strings.HasSuffix(kind, "_SYM")), l, b[0], b[1])
	}
	return sx("aexpr", str(f, "kind"), op, l, r)
}

package parser

import "strings"

// PostgreSQL operator precedence, lowest first. See the table in the
// PostgreSQL manual, "Operator Precedence".
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3
	precIs      = 4 // IS, ISNULL, NOTNULL
	precCmp     = 5 // < > = <= >= <>
	precIn      = 6 // BETWEEN IN LIKE ILIKE
	precOther   = 7 // || and every other operator
	precAdd     = 8
	precMul     = 9
	precPow     = 10
	precUnary   = 11 // unary + - ~
	precPostfix = 12 // [] subscript, :: cast
	precPrimary = 13
)

// binaryOpOf maps an operator token to its BinaryOp. A switch rather than
// a map: it runs for every operator and punctuation token of an expression.
func binaryOpOf(s string) (BinaryOp, bool) {
	switch s {
	case "=":
		return OpEq, true
	case "<>", "!=":
		return OpNe, true
	case "<":
		return OpLt, true
	case "<=":
		return OpLe, true
	case ">":
		return OpGt, true
	case ">=":
		return OpGe, true
	case "||":
		return OpConcat, true
	case "->":
		return OpArrow, true
	case "->>":
		return OpArrow2, true
	case "&":
		return OpBitAnd, true
	case "|":
		return OpBitOr, true
	case "#":
		return OpBitXor, true
	case "<<":
		return OpShl, true
	case ">>":
		return OpShr, true
	case "~":
		return OpRegex, true
	case "!~":
		return OpNotRegex, true
	case "~*":
		return OpIRegex, true
	case "!~*":
		return OpNotIRegex, true
	case "@>":
		return OpContains, true
	case "<@":
		return OpContainedBy, true
	case "&&":
		return OpOverlap, true
	case "+":
		return OpAdd, true
	case "-":
		return OpSub, true
	case "*":
		return OpMul, true
	case "/":
		return OpDiv, true
	case "%":
		return OpMod, true
	case "^":
		return OpPow, true
	}
	return 0, false
}

// binaryPrec returns the precedence level of op.
func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return precCmp
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv, OpMod:
		return precMul
	case OpPow:
		return precPow
	}
	return precOther
}

// expr parses an expression whose operators all bind at least as tightly
// as minPrec (precedence climbing). Arithmetic and the other operators are
// left associative; comparisons, IS and BETWEEN/IN/LIKE do not chain, as in
// PostgreSQL: a < b = c needs parentheses.
func (p *parser) expr(minPrec int) Expr {
	p.enter()
	defer p.leave()
	left := p.prefix()
	last := 0 // precedence of the last operator applied at this level
	for {
		t := p.tok
		var prec int
		switch t.kind {
		case tOp:
			op, ok := binaryOpOf(t.val)
			if !ok {
				return left
			}
			prec = binaryPrec(op)
			if prec < minPrec {
				return left
			}
			p.nonAssoc(prec, last)
			p.next()
			if prec == precCmp && p.quantifierHere() {
				left = p.quantified(left, op)
				break
			}
			right := p.expr(prec + 1)
			left = &BinaryExpr{Pos: left.Position(), Op: op, L: left, R: right}
		case tWord:
			prec = p.wordPrec()
			if prec == 0 || prec < minPrec {
				return left
			}
			p.nonAssoc(prec, last)
			var ok bool
			left, ok = p.infixWord(left, minPrec)
			if !ok {
				return left
			}
		default:
			return left
		}
		last = prec
	}
}

// quantifierHere reports whether ANY, SOME or ALL followed by a
// parenthesis starts the right side of a comparison.
func (p *parser) quantifierHere() bool {
	return (p.isKw("ANY") || p.isKw("SOME") || p.isKw("ALL")) && p.peek(1).isOp("(")
}

// quantified parses the ANY|SOME|ALL ( subquery | array ) after x op.
func (p *parser) quantified(x Expr, op BinaryOp) Expr {
	q := &Quantified{Pos: x.Position(), X: x, Op: op, All: p.isKw("ALL")}
	p.next()
	p.expectOp("(")
	if p.queryStartsHere() {
		q.Query = p.query()
	} else {
		q.Array = p.expr(0)
	}
	p.expectOp(")")
	return q
}

// nonAssoc refuses a second comparison, IS or BETWEEN/IN/LIKE in a row.
func (p *parser) nonAssoc(prec, last int) {
	if prec == last && (prec == precCmp || prec == precIs || prec == precIn) {
		p.failMsg(p.tok.val + " cannot follow another operator of its precedence; add parentheses")
	}
}

// wordPrec returns the precedence of the keyword operator at the current
// token, or 0 if it is not one.
func (p *parser) wordPrec() int {
	switch {
	case p.isKw("OR"):
		return precOr
	case p.isKw("AND"):
		return precAnd
	case p.isKw("IS"), p.isKw("ISNULL"), p.isKw("NOTNULL"):
		return precIs
	case p.isKw("BETWEEN"), p.isKw("IN"), p.isKw("LIKE"), p.isKw("ILIKE"), p.isKw("SIMILAR") && p.peek(1).isKw("TO"):
		return precIn
	case p.isKw("NOT"):
		n := p.peek(1)
		if n.isKw("BETWEEN") || n.isKw("IN") || n.isKw("LIKE") || n.isKw("ILIKE") || n.isKw("SIMILAR") {
			return precIn
		}
	case p.isKw("AT") && p.peek(1).isKw("TIME") && p.peek(2).isKw("ZONE"):
		return precPostfix - 1
	case p.isKw("OPERATOR") && p.peek(1).isOp("("):
		return precOther
	case p.isKw("COLLATE"):
		return precPostfix
	}
	return 0
}

// operatorCall parses PostgreSQL's OPERATOR(schema.op) spelling of a
// binary operator, which psql writes (OPERATOR(pg_catalog.~)); the schema
// is dropped: skade has one set of operators.
func (p *parser) operatorCall(left Expr) Expr {
	p.next()
	p.expectOp("(")
	for (p.tok.kind == tWord || p.tok.kind == tQIdent) && p.peek(1).isOp(".") {
		p.next()
		p.next()
	}
	if p.tok.kind != tOp {
		p.note("operator")
		p.fail()
	}
	op, ok := binaryOpOf(p.tok.val)
	if !ok {
		p.failMsg("operator " + p.tok.val + " is not a binary operator")
	}
	p.next()
	p.expectOp(")")
	return &BinaryExpr{Pos: left.Position(), Op: op, L: left, R: p.expr(precOther + 1)}
}

// collate parses COLLATE name after an expression. skade compares text
// by code point only, so the collation is checked for shape and dropped;
// PostgreSQL's "default" and "C" collations mean exactly that.
func (p *parser) collate(left Expr) Expr {
	p.next()
	for {
		if p.tok.kind != tWord && p.tok.kind != tQIdent {
			p.note("collation name")
			p.fail()
		}
		p.next()
		if !p.acceptOp(".") {
			return left
		}
	}
}

// infixWord handles the keyword operators: AND, OR, IS, ISNULL, NOTNULL,
// [NOT] BETWEEN / IN / LIKE / ILIKE. ok is false when the current word does
// not continue the expression at this precedence.
func (p *parser) infixWord(left Expr, minPrec int) (Expr, bool) {
	pos := left.Position()
	switch {
	case p.isKw("OPERATOR"):
		return p.operatorCall(left), true
	case p.isKw("COLLATE"):
		return p.collate(left), true
	case p.isKw("AT") && p.peek(1).isKw("TIME") && p.peek(2).isKw("ZONE"):
		// x AT TIME ZONE zone is PostgreSQL's timezone(zone, x)
		p.next()
		p.next()
		p.next()
		zone := p.expr(precUnary)
		return &FuncCall{Pos: pos, Name: Name{{Pos: pos, Name: "timezone"}}, Args: []Expr{zone, left}}, true
	case p.isKw("OR"):
		if precOr < minPrec {
			return left, false
		}
		p.next()
		return &BinaryExpr{Pos: pos, Op: OpOr, L: left, R: p.expr(precOr + 1)}, true
	case p.isKw("AND"):
		if precAnd < minPrec {
			return left, false
		}
		p.next()
		return &BinaryExpr{Pos: pos, Op: OpAnd, L: left, R: p.expr(precAnd + 1)}, true
	case p.isKw("IS"):
		if precIs < minPrec {
			return left, false
		}
		p.next()
		x := &IsExpr{Pos: pos, X: left, Not: p.acceptKw("NOT")}
		switch {
		case p.acceptKw("NULL"):
			x.Test = IsNull
		case p.acceptKw("TRUE"):
			x.Test = IsTrue
		case p.acceptKw("FALSE"):
			x.Test = IsFalse
		case p.acceptKw("UNKNOWN"):
			x.Test = IsUnknown
		case p.acceptKw("DISTINCT"):
			p.expectKw("FROM")
			x.Test = IsDistinctFrom
			x.From = p.expr(precIs + 1)
		default:
			p.fail()
		}
		return x, true
	case p.isKw("ISNULL"), p.isKw("NOTNULL"):
		if precIs < minPrec {
			return left, false
		}
		not := p.isKw("NOTNULL")
		p.next()
		return &IsExpr{Pos: pos, X: left, Not: not, Test: IsNull}, true
	}
	not := false
	if p.isKw("NOT") {
		n := p.peek(1)
		if !(n.isKw("BETWEEN") || n.isKw("IN") || n.isKw("LIKE") || n.isKw("ILIKE") || n.isKw("SIMILAR")) {
			return left, false
		}
		if precIn < minPrec {
			return left, false
		}
		not = true
		p.next()
	}
	if precIn < minPrec {
		return left, false
	}
	switch {
	case p.isKw("BETWEEN"):
		p.next()
		b := &BetweenExpr{Pos: pos, X: left, Not: not}
		if p.acceptKw("SYMMETRIC") {
			b.Symmetric = true
		} else {
			p.acceptKw("ASYMMETRIC")
		}
		b.Lo = p.expr(precOther)
		p.expectKw("AND")
		b.Hi = p.expr(precOther)
		return b, true
	case p.isKw("IN"):
		p.next()
		in := &InExpr{Pos: pos, X: left, Not: not}
		p.expectOp("(")
		if p.queryStartsHere() {
			in.Query = p.query()
		} else {
			in.List = p.exprList()
		}
		p.expectOp(")")
		return in, true
	case p.isKw("LIKE"), p.isKw("ILIKE"):
		l := &LikeExpr{Pos: pos, X: left, Not: not, ILike: p.isKw("ILIKE")}
		p.next()
		l.Pattern = p.expr(precOther)
		if p.acceptKw("ESCAPE") {
			l.Escape = p.expr(precOther)
		}
		return l, true
	case p.isKw("SIMILAR") && p.peek(1).isKw("TO"):
		// x SIMILAR TO pattern [ESCAPE e]: similar_to(x, pattern[, e])
		p.next()
		p.next()
		f := &FuncCall{Pos: pos, Name: Name{{Pos: pos, Name: "similar_to"}}, Args: []Expr{left, p.expr(precOther)}}
		if p.acceptKw("ESCAPE") {
			f.Args = append(f.Args, p.expr(precOther))
		}
		if not {
			return &UnaryExpr{Pos: pos, Op: OpNot, X: f}, true
		}
		return f, true
	}
	return left, false
}

// prefix parses the prefix operators and a primary with its postfix
// operators.
func (p *parser) prefix() Expr {
	t := *p.tok
	pos := t.pos()
	switch {
	case t.isKw("NOT"):
		p.next()
		return &UnaryExpr{Pos: pos, Op: OpNot, X: p.expr(precNot)}
	case t.isOp("-"), t.isOp("+"), t.isOp("~"):
		p.next()
		x := p.expr(precUnary)
		if t.val == "-" {
			// Fold -<number> into the literal so LIMIT -1, DEFAULT -1 and
			// partition parameters see a plain negative constant.
			if lit, ok := x.(*Literal); ok && lit.Kind >= LitInteger && lit.Kind <= LitFloat &&
				!strings.HasPrefix(lit.Value, "-") {
				return &Literal{Pos: pos, Kind: lit.Kind, Value: "-" + lit.Value}
			}
			return &UnaryExpr{Pos: pos, Op: OpNeg, X: x}
		}
		if t.val == "+" {
			return &UnaryExpr{Pos: pos, Op: OpPlus, X: x}
		}
		return &UnaryExpr{Pos: pos, Op: OpBitNot, X: x}
	}
	return p.postfix(p.primary())
}

// postfix applies x::type and x[i], which bind tighter than any operator.
// Each application counts towards the depth limit: the AST nests one level
// per cast or subscript even though the loop does not recurse.
func (p *parser) postfix(x Expr) Expr {
	entered := 0
	defer func() { p.depth -= entered }()
	for {
		if p.isOp("::") || p.isOp("[") || p.isOp(".") {
			p.enter()
			entered++
		}
		switch {
		case p.isOp("::"):
			p.next()
			x = &Cast{Pos: x.Position(), X: x, Type: p.typeName()}
		case p.isOp("["):
			p.next()
			idx := p.expr(0)
			p.expectOp("]")
			x = &Subscript{Pos: x.Position(), X: x, Index: idx}
		case p.isOp(".") && (p.peek(1).kind == tWord || p.peek(1).kind == tQIdent):
			// (s).a, f(x).a: a field of a struct value
			p.next()
			x = &FieldAccess{Pos: x.Position(), X: x, Field: p.label("field name")}
		default:
			return x
		}
	}
}

// sqlValueFuncs are the functions SQL spells without parentheses.
var sqlValueFuncs = map[string]bool{
	"CURRENT_DATE": true, "CURRENT_TIME": true, "CURRENT_TIMESTAMP": true,
	"LOCALTIME": true, "LOCALTIMESTAMP": true, "CURRENT_USER": true,
	"SESSION_USER": true, "USER": true, "CURRENT_CATALOG": true, "CURRENT_ROLE": true,
	"CURRENT_SCHEMA": true,
}

// literalTypes are the type names that may prefix a string literal.
var literalTypes = map[string]bool{"DATE": true, "TIME": true, "TIMESTAMP": true,
	"TIMESTAMPTZ": true, "UUID": true, "JSON": true, "BOOLEAN": true, "DECIMAL": true,
	"NUMERIC": true, "INTEGER": true, "BIGINT": true, "VARCHAR": true, "TEXT": true,
	"DOUBLE": true, "REAL": true, "BLOB": true, "BYTEA": true}

func (p *parser) primary() Expr {
	t := *p.tok
	pos := t.pos()
	switch t.kind {
	case tInteger, tDecimal, tFloat:
		p.next()
		k := LitInteger
		if t.kind == tDecimal {
			k = LitDecimal
		} else if t.kind == tFloat {
			k = LitFloat
		}
		return &Literal{Pos: pos, Kind: k, Value: t.val}
	case tString:
		p.next()
		return &Literal{Pos: pos, Kind: LitString, Value: t.val}
	case tParam:
		p.next()
		n := 0
		for _, c := range t.val {
			n = n*10 + int(c-'0')
		}
		return &Param{Pos: pos, Index: n}
	case tQMark:
		p.next()
		p.nparams++
		return &Param{Pos: pos, Index: p.nparams, Positional: true}
	case tQIdent:
		return p.nameExpr()
	case tOp:
		switch t.val {
		case "(":
			return p.parenExpr()
		case "[":
			p.next()
			a := &ArrayExpr{Pos: pos}
			if !p.isOp("]") {
				a.Elems = p.exprList()
			}
			p.expectOp("]")
			return a
		case "{":
			return p.structExpr()
		}
	case tWord:
		if e := p.keywordExpr(); e != nil {
			return e
		}
		if !t.reserved || funcNameWords[internUpper(t.val)] && p.peek(1).isOp("(") {
			return p.nameExpr()
		}
	}
	p.note("expression")
	p.fail()
	return nil
}

// keywordExpr parses the expressions introduced by a keyword, or returns nil.
func (p *parser) keywordExpr() Expr {
	t := *p.tok
	pos := t.pos()
	next := p.peek(1)
	up := internUpper(t.val)
	if up == "" {
		return nil
	}
	switch up {
	case "NULL":
		p.next()
		return &Literal{Pos: pos, Kind: LitNull, Value: "NULL"}
	case "TRUE", "FALSE":
		p.next()
		return &Literal{Pos: pos, Kind: LitBool, Value: strings.ToLower(up)}
	case "DEFAULT":
		p.next()
		return &Default{Pos: pos}
	case "CASE":
		return p.caseExpr()
	case "CAST", "TRY_CAST":
		if !next.isOp("(") {
			break
		}
		p.next()
		p.next()
		x := p.expr(0)
		p.expectKw("AS")
		typ := p.typeName()
		p.expectOp(")")
		return &Cast{Pos: pos, X: x, Type: typ, Try: up == "TRY_CAST"}
	case "EXISTS":
		if !next.isOp("(") {
			break
		}
		p.next()
		p.next()
		q := p.query()
		p.expectOp(")")
		return &Exists{Pos: pos, Query: q}
	case "EXTRACT":
		if !next.isOp("(") {
			break
		}
		p.next()
		p.next()
		var field string
		switch p.tok.kind {
		case tWord, tQIdent, tString:
			field = upper(p.tok.val)
			p.next()
		default:
			p.note("field name")
			p.fail()
		}
		p.expectKw("FROM")
		x := p.expr(0)
		p.expectOp(")")
		return &Extract{Pos: pos, Field: field, X: x}
	case "INTERVAL":
		switch next.kind {
		case tString, tInteger, tDecimal:
			p.next()
			v := p.primary()
			return &IntervalLiteral{Pos: pos, Value: v, Unit: p.intervalUnit()}
		case tOp:
			if next.val == "(" {
				p.next()
				v := p.parenExpr()
				unit := p.intervalUnit()
				if unit == "" {
					p.note("interval unit")
					p.fail()
				}
				return &IntervalLiteral{Pos: pos, Value: v, Unit: unit}
			}
		}
	case "MAP":
		if next.isOp("{") {
			// DuckDB's MAP {k: v, …}
			p.next()
			p.next()
			m := &MapExpr{Pos: pos}
			for !p.isOp("}") {
				m.Keys = append(m.Keys, p.expr(0))
				p.expectOp(":")
				m.Values = append(m.Values, p.expr(0))
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp("}")
			return m
		}
	case "ARRAY":
		if next.isOp("[") {
			p.next()
			p.next()
			a := &ArrayExpr{Pos: pos}
			if !p.isOp("]") {
				a.Elems = p.exprList()
			}
			p.expectOp("]")
			return a
		}
		if next.isOp("(") {
			if t2 := p.peek(2); t2.isKw("SELECT") || t2.isKw("WITH") || t2.isKw("VALUES") {
				p.next()
				p.next()
				q := p.query()
				p.expectOp(")")
				return &ArraySubquery{Pos: pos, Query: q}
			}
		}
	}
	if sqlValueFuncs[up] && !next.isOp("(") {
		p.next()
		return &FuncCall{Pos: pos, Name: Name{{Pos: pos, Name: t.val}}, NoParens: true}
	}
	if literalTypes[up] && next.kind == tString {
		typ := p.typeName()
		v := p.tok.val
		p.next()
		return &TypedLiteral{Pos: pos, Type: typ, Value: v}
	}
	return nil
}

// intervalUnits are the units of INTERVAL n UNIT, singular and plural.
var intervalUnits = map[string]string{
	"YEAR": "YEAR", "YEARS": "YEAR", "MONTH": "MONTH", "MONTHS": "MONTH",
	"WEEK": "WEEK", "WEEKS": "WEEK", "DAY": "DAY", "DAYS": "DAY",
	"HOUR": "HOUR", "HOURS": "HOUR", "MINUTE": "MINUTE", "MINUTES": "MINUTE",
	"SECOND": "SECOND", "SECONDS": "SECOND", "MILLISECOND": "MILLISECOND",
	"MILLISECONDS": "MILLISECOND", "MICROSECOND": "MICROSECOND", "MICROSECONDS": "MICROSECOND",
}

func (p *parser) intervalUnit() string {
	if p.tok.kind == tWord {
		if u, ok := intervalUnits[upper(p.tok.val)]; ok {
			p.next()
			return u
		}
	}
	return ""
}

// parenExpr parses ( expr ), a row (a, b) or a scalar subquery.
func (p *parser) parenExpr() Expr {
	pos := p.tok.pos()
	p.next() // (
	if p.queryStartsHere() {
		q := p.query()
		p.expectOp(")")
		return &SubqueryExpr{Pos: pos, Query: q}
	}
	x := p.expr(0)
	if p.isOp(",") {
		row := &RowExpr{Pos: pos, Elems: []Expr{x}}
		for p.acceptOp(",") {
			row.Elems = append(row.Elems, p.expr(0))
		}
		p.expectOp(")")
		return row
	}
	p.expectOp(")")
	return x
}

// queryStartsHere reports whether the current token starts a query. Only
// SELECT, WITH and VALUES count: "((SELECT 1) + 1)" is an expression whose
// operand is a subquery, so a parenthesis here is read as an expression.
func (p *parser) queryStartsHere() bool {
	t := *p.tok
	return t.isKw("SELECT") || t.isKw("WITH") || t.isKw("VALUES")
}

func (p *parser) exprList() []Expr {
	list := []Expr{p.expr(0)}
	for p.isOp(",") {
		p.next()
		list = append(list, p.expr(0))
	}
	return list
}

// ident parses one identifier (bare word that is not reserved, or quoted).
func (p *parser) ident(what string) Ident {
	t := *p.tok
	switch {
	case t.kind == tQIdent:
		p.next()
		return Ident{Pos: t.pos(), Name: t.val, Quoted: true}
	case t.kind == tWord && !t.reserved:
		p.next()
		return Ident{Pos: t.pos(), Name: t.val}
	}
	p.note(what)
	p.fail()
	return Ident{}
}

// label parses an identifier where any word, even a reserved one, is
// unambiguous: after a dot, or after AS.
func (p *parser) label(what string) Ident {
	t := *p.tok
	if t.kind == tWord {
		p.next()
		return Ident{Pos: t.pos(), Name: t.val}
	}
	return p.ident(what)
}

func (p *parser) isIdent() bool {
	return p.tok.kind == tQIdent || p.tok.kind == tWord && !p.tok.reserved
}

// identList parses a, b, c.
func (p *parser) identList(what string) []Ident {
	list := []Ident{p.ident(what)}
	for p.isOp(",") {
		p.next()
		list = append(list, p.ident(what))
	}
	return list
}

// parenIdentList parses (a, b, c).
func (p *parser) parenIdentList(what string) []Ident {
	p.expectOp("(")
	l := p.identList(what)
	p.expectOp(")")
	return l
}

// dottedName parses a.b.c (1 to 3 parts are meaningful; more are kept for
// the binder to refuse).
func (p *parser) dottedName(what string) Name {
	n := Name{p.ident(what)}
	for p.isOp(".") && p.peek(1).kind != tOp {
		p.next()
		n = append(n, p.label(what))
	}
	return n
}

// nameExpr parses a column reference, t.*, or a function call.
func (p *parser) nameExpr() Expr {
	pos := p.tok.pos()
	var n Name
	if p.tok.kind == tWord && p.tok.reserved {
		// only left(...)/right(...) get here
		n = Name{p.label("name")}
	} else {
		n = Name{p.ident("name")}
	}
	for p.isOp(".") {
		p.next()
		if p.isOp("*") {
			p.next()
			return &Star{Pos: pos, Table: n}
		}
		n = append(n, p.label("column name"))
	}
	if p.isOp("(") {
		return p.funcCall(pos, n)
	}
	return &ColumnRef{Pos: pos, Name: n}
}

func (p *parser) caseExpr() Expr {
	c := &CaseExpr{Pos: p.tok.pos()}
	p.next()
	if !p.isKw("WHEN") {
		c.Operand = p.expr(0)
	}
	for p.isKw("WHEN") {
		w := &When{Pos: p.tok.pos()}
		p.next()
		w.Cond = p.expr(0)
		p.expectKw("THEN")
		w.Result = p.expr(0)
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.expectKw("WHEN")
	}
	if p.acceptKw("ELSE") {
		c.Else = p.expr(0)
	}
	p.expectKw("END")
	return c
}

// structExpr parses DuckDB's struct literal {'a': 1, b: 2}: each field
// named by a string or an identifier.
func (p *parser) structExpr() Expr {
	x := &StructExpr{Pos: p.tok.pos()}
	p.expectOp("{")
	for !p.isOp("}") {
		var name Ident
		if p.tok.kind == tString {
			name = Ident{Pos: p.tok.pos(), Name: p.tok.val, Quoted: true}
			p.next()
		} else {
			name = p.label("field name")
		}
		p.expectOp(":")
		x.Fields = append(x.Fields, StructField{Name: name, Value: p.expr(0)})
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp("}")
	return x
}

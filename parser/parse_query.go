package parser

// query parses [WITH …] body [ORDER BY …] [LIMIT …] [OFFSET …] [FETCH …].
func (p *parser) query() *Query {
	p.enter()
	defer p.leave()
	q := &Query{Pos: p.tok.pos()}
	if p.isKw("WITH") {
		q.With = p.with()
	}
	q.Body = p.setExpr()
	p.queryTail(q)
	return q
}

// groupByList parses GROUP BY's items: expressions, GROUPING SETS (…),
// ROLLUP (…) and CUBE (…).
func (p *parser) groupByList() []Expr {
	var out []Expr
	for {
		out = append(out, p.groupByItem())
		if !p.acceptOp(",") {
			return out
		}
	}
}

func (p *parser) groupByItem() Expr {
	pos := p.tok.pos()
	switch {
	case p.isKw("GROUPING") && p.peek(1).isKw("SETS"):
		p.next()
		p.next()
		g := &GroupingSets{Pos: pos, Kind: "GROUPING SETS"}
		p.expectOp("(")
		for {
			if p.isOp("(") {
				// a parenthesised set: (), (a), (a, b)
				p.next()
				var set []Expr
				if !p.isOp(")") {
					set = p.exprList()
				}
				p.expectOp(")")
				g.Sets = append(g.Sets, set)
			} else {
				g.Sets = append(g.Sets, []Expr{p.expr(0)})
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return g
	case (p.isKw("ROLLUP") || p.isKw("CUBE")) && p.peek(1).isOp("("):
		g := &GroupingSets{Pos: pos, Kind: upper(p.tok.val)}
		p.next()
		p.next()
		for {
			x := p.expr(0)
			if row, ok := x.(*RowExpr); ok {
				g.Sets = append(g.Sets, row.Elems)
			} else {
				g.Sets = append(g.Sets, []Expr{x})
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return g
	}
	return p.expr(0)
}

// queryTail parses the ORDER BY / LIMIT / OFFSET / FETCH of q.
func (p *parser) queryTail(q *Query) {
	p.note("ORDER BY")
	if p.isKw("ORDER") {
		p.next()
		p.expectKw("BY")
		q.OrderBy = p.orderItems()
	}
	p.note("LIMIT")
	for {
		switch {
		case p.isKw("LIMIT"):
			if q.Limit != nil {
				p.failMsg("LIMIT given twice")
			}
			p.next()
			if !p.acceptKw("ALL") {
				q.Limit = p.expr(0)
			}
		case p.isKw("OFFSET"):
			if q.Offset != nil {
				p.failMsg("OFFSET given twice")
			}
			p.next()
			q.Offset = p.expr(0)
			if !p.acceptKw("ROWS") {
				p.acceptKw("ROW")
			}
		case p.isKw("FETCH"):
			if q.Limit != nil {
				p.failMsg("FETCH and LIMIT both given")
			}
			p.next()
			if !p.acceptKw("FIRST") {
				p.expectKw("NEXT")
			}
			if p.isKw("ROW") || p.isKw("ROWS") {
				q.Limit = &Literal{Pos: p.tok.pos(), Kind: LitInteger, Value: "1"}
			} else {
				q.Limit = p.expr(precOther)
			}
			if !p.acceptKw("ROWS") {
				p.expectKw("ROW")
			}
			if p.acceptKw("WITH") {
				p.expectKw("TIES")
				q.WithTies = true
			} else {
				p.expectKw("ONLY")
			}
		default:
			return
		}
	}
}

func (p *parser) with() *With {
	w := &With{Pos: p.expectKw("WITH")}
	w.Recursive = p.acceptKw("RECURSIVE")
	for {
		c := &CTE{Pos: p.tok.pos(), Name: p.ident("common table expression name")}
		if p.isOp("(") {
			c.Columns = p.parenIdentList("column name")
		}
		p.expectKw("AS")
		if p.acceptKw("MATERIALIZED") {
			c.Materialized = "MATERIALIZED"
		} else if p.isKw("NOT") && p.peek(1).isKw("MATERIALIZED") {
			p.next()
			p.next()
			c.Materialized = "NOT MATERIALIZED"
		}
		p.expectOp("(")
		if p.isKw("INSERT") || p.isKw("UPDATE") || p.isKw("DELETE") || p.isKw("MERGE") {
			c.DML = p.statement()
		} else {
			c.Query = p.query()
		}
		p.expectOp(")")
		w.CTEs = append(w.CTEs, c)
		if !p.acceptOp(",") {
			return w
		}
	}
}

// setExpr parses term { UNION|EXCEPT [ALL|DISTINCT] term }.
func (p *parser) setExpr() QueryBody {
	left := p.setTerm()
	for {
		var op SetOpKind
		pos := p.tok.pos()
		switch {
		case p.acceptKw("UNION"):
			op = Union
		case p.acceptKwQuiet("EXCEPT"):
			op = Except
		default:
			return left
		}
		all := p.acceptKw("ALL")
		if !all {
			p.acceptKw("DISTINCT")
		}
		right := p.setTerm()
		left = &SetOp{Pos: pos, Op: op, All: all, Left: left, Right: right}
	}
}

// setTerm parses primary { INTERSECT [ALL|DISTINCT] primary }: INTERSECT
// binds tighter than UNION and EXCEPT.
func (p *parser) setTerm() QueryBody {
	left := p.setPrimary()
	for p.isKw("INTERSECT") {
		pos := p.tok.pos()
		p.next()
		all := p.acceptKw("ALL")
		if !all {
			p.acceptKw("DISTINCT")
		}
		right := p.setPrimary()
		left = &SetOp{Pos: pos, Op: Intersect, All: all, Left: left, Right: right}
	}
	return left
}

// setPrimary parses SELECT …, VALUES …, TABLE name or ( query ). A
// parenthesised query without its own WITH/ORDER BY/LIMIT is unwrapped so
// (SELECT 1) and SELECT 1 give the same AST.
func (p *parser) setPrimary() QueryBody {
	switch {
	case p.isKw("SELECT"):
		return p.selectCore()
	case p.isKw("VALUES"):
		return p.values()
	case p.isKw("TABLE"):
		pos := p.tok.pos()
		p.next()
		n := p.dottedName("table name")
		return &Select{Pos: pos, Items: []*SelectItem{{Pos: pos, Expr: &Star{Pos: pos}}},
			From: []TableExpr{&TableName{Pos: n[0].Pos, Name: n}}}
	case p.isOp("("):
		p.next()
		q := p.query()
		p.expectOp(")")
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	p.note("SELECT")
	p.note("VALUES")
	p.note("WITH")
	p.note(`"("`)
	p.fail()
	return nil
}

func (p *parser) values() *Values {
	v := &Values{Pos: p.expectKw("VALUES")}
	for {
		start := p.p
		p.expectOp("(")
		row := p.exprList()
		p.expectOp(")")
		if len(v.Rows) > 0 && len(row) != len(v.Rows[0]) {
			p.failAtToken(start, "VALUES lists must all be the same length: this row has "+
				itoa(len(row))+" values, the first has "+itoa(len(v.Rows[0])))
		}
		v.Rows = append(v.Rows, row)
		if !p.acceptOp(",") {
			return v
		}
	}
}

func (p *parser) selectCore() *Select {
	s := &Select{Pos: p.expectKw("SELECT")}
	if p.acceptKw("DISTINCT") {
		s.Distinct = true
		if p.acceptKw("ON") {
			p.expectOp("(")
			s.DistinctOn = p.exprList()
			p.expectOp(")")
		}
	} else {
		p.acceptKw("ALL")
	}
	s.Items = p.selectItems()
	if p.acceptKw("FROM") {
		s.From = p.fromList()
	}
	if p.acceptKw("WHERE") {
		s.Where = p.expr(0)
	}
	p.note("GROUP BY")
	if p.isKw("GROUP") {
		p.next()
		p.expectKw("BY")
		if p.isKw("ALL") {
			p.next()
			s.GroupByAll = true
		} else {
			s.GroupBy = p.groupByList()
		}
	}
	if p.acceptKw("HAVING") {
		s.Having = p.expr(0)
	}
	if p.acceptKwQuiet("WINDOW") {
		for {
			w := &NamedWindow{Pos: p.tok.pos(), Name: p.ident("window name")}
			p.expectKw("AS")
			w.Spec = p.windowSpec()
			s.Windows = append(s.Windows, w)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.acceptKwQuiet("QUALIFY") {
		s.Qualify = p.expr(0)
	}
	return s
}

// selectItems parses a select or RETURNING list.
func (p *parser) selectItems() []*SelectItem {
	var items []*SelectItem
	for {
		items = append(items, p.selectItem())
		if !p.acceptOp(",") {
			return items
		}
	}
}

func (p *parser) selectItem() *SelectItem {
	it := &SelectItem{Pos: p.tok.pos()}
	if p.isOp("*") {
		p.next()
		it.Expr = &Star{Pos: it.Pos}
	} else {
		it.Expr = p.expr(0)
	}
	if st, ok := it.Expr.(*Star); ok {
		p.starModifiers(st)
		return it
	}
	it.Alias = p.optAlias(false)
	return it
}

// starModifiers parses EXCLUDE (…) and REPLACE (…) after * or t.*.
func (p *parser) starModifiers(st *Star) {
	if p.acceptKw("EXCLUDE") {
		if p.isOp("(") {
			st.Exclude = p.parenIdentList("column name")
		} else {
			st.Exclude = []Ident{p.ident("column name")}
		}
	}
	if p.acceptKw("REPLACE") {
		p.expectOp("(")
		for {
			r := &ReplaceItem{Pos: p.tok.pos(), Expr: p.expr(0)}
			p.expectKw("AS")
			r.Name = p.label("column name")
			st.Replace = append(st.Replace, r)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
}

// optAlias parses [AS] name. A bare name is taken only when it is not
// reserved and not where the error path asked to refuse it; forTable
// additionally refuses the words that continue a FROM item.
func (p *parser) optAlias(forTable bool) Ident {
	if p.acceptKwQuiet("AS") {
		return p.label("alias")
	}
	t := *p.tok
	if t.kind == tQIdent {
		p.next()
		return Ident{Pos: t.pos(), Name: t.val, Quoted: true}
	}
	if t.kind != tWord || t.reserved || t.off == p.noAliasAt {
		return Ident{}
	}
	if forTable && p.continuesTable() {
		return Ident{}
	}
	if p.isKw("SET") {
		// UPDATE t SET …: PostgreSQL also refuses SET as a bare alias there.
		return Ident{}
	}
	p.next()
	p.lastAliasIndex = p.p - 1
	return Ident{Pos: t.pos(), Name: t.val}
}

// continuesTable reports whether the current word starts time travel (AT
// (…), VERSION AS OF, TIMESTAMP AS OF) rather than an alias.
func (p *parser) continuesTable() bool {
	switch {
	case p.isKw("AT"):
		return p.peek(1).isOp("(")
	case p.isKw("VERSION"), p.isKw("TIMESTAMP"):
		return p.peek(1).isKw("AS") && p.peek(2).isKw("OF")
	case p.isKw("TABLESAMPLE"), p.isKw("CLONE"):
		return true
	}
	return false
}

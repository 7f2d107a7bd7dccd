package parser

// fromList parses item, item, … where each item may carry joins.
func (p *parser) fromList() []TableExpr {
	var list []TableExpr
	for {
		list = append(list, p.tableRef())
		if !p.acceptOp(",") {
			return list
		}
	}
}

// tableRef parses a FROM item and the joins that follow it (joins are left
// associative).
func (p *parser) tableRef() TableExpr {
	p.enter()
	defer p.leave()
	left := p.tablePrimary()
	for {
		pos := p.tok.pos()
		natural := false
		if p.isKw("NATURAL") {
			p.next()
			natural = true
		}
		var kind JoinKind
		switch {
		case p.isKw("JOIN"):
			kind = InnerJoin
		case p.isKw("INNER"):
			p.next()
			kind = InnerJoin
		case p.isKw("LEFT"):
			p.next()
			p.acceptKw("OUTER")
			kind = LeftJoin
		case p.isKw("RIGHT"):
			p.next()
			p.acceptKw("OUTER")
			kind = RightJoin
		case p.isKw("FULL"):
			p.next()
			p.acceptKw("OUTER")
			kind = FullJoin
		case p.isKw("CROSS"):
			p.next()
			kind = CrossJoin
		default:
			if natural {
				p.note("JOIN")
				p.fail()
			}
			return left
		}
		p.expectKw("JOIN")
		j := &Join{Pos: pos, Kind: kind, Natural: natural, Left: left, Right: p.tablePrimary()}
		if kind != CrossJoin && !natural {
			switch {
			case p.acceptKw("ON"):
				j.On = p.expr(0)
			case p.acceptKw("USING"):
				j.Using = p.parenIdentList("column name")
			default:
				p.fail()
			}
		}
		left = j
	}
}

// tablePrimary parses one FROM item without joins: a table (with time
// travel), a table function, a subquery, or a parenthesised join.
func (p *parser) tablePrimary() TableExpr {
	pos := p.tok.pos()
	lateral := p.acceptKw("LATERAL")
	if p.isOp("(") {
		if p.peekQueryAfterParen() {
			p.next()
			q := p.query()
			p.expectOp(")")
			return &SubqueryRef{Pos: pos, Lateral: lateral, Query: q, Alias: p.tableAlias()}
		}
		if lateral {
			p.note("SELECT")
			p.fail()
		}
		p.next()
		inner := p.tableRef()
		p.expectOp(")")
		return &ParenTable{Pos: pos, Table: inner, Alias: p.tableAlias()}
	}
	if !p.isIdent() {
		p.note("table name")
		p.note(`"("`)
		p.fail()
	}
	n := p.dottedName("table name")
	if p.isOp("(") {
		p.next()
		f := &TableFunc{Pos: pos, Name: n}
		if !p.isOp(")") {
			f.Args = p.argList()
			// DuckDB spells named table-function arguments name = value.
			for i, a := range f.Args {
				if b, ok := a.(*BinaryExpr); ok && b.Op == OpEq {
					if c, ok := b.L.(*ColumnRef); ok && len(c.Name) == 1 {
						f.Args[i] = &NamedArg{Pos: b.Pos, Name: c.Name[0], Value: b.R}
					}
				}
			}
		}
		p.expectOp(")")
		if p.isKw("WITH") && p.peek(1).isKw("ORDINALITY") {
			p.next()
			p.next()
			f.Ordinality = true
		}
		f.Alias = p.tableAlias()
		return f
	}
	if lateral {
		p.failAtToken(p.p-len(n), "LATERAL must be followed by a subquery or a table function")
	}
	t := &TableName{Pos: pos, Name: n}
	t.AsOf = p.asOf()
	t.Alias = p.tableAlias()
	if t.AsOf == nil && t.Alias != nil {
		t.AsOf = p.asOf()
	}
	return t
}

// peekQueryAfterParen reports whether the "(" at the current token opens a
// query rather than a parenthesised join.
func (p *parser) peekQueryAfterParen() bool {
	// The scan is capped so that a long run of parentheses stays linear;
	// past the cap the parenthesis is read as a nested FROM item, whose own
	// scan then finds the query.
	for i := 1; i <= 64; i++ {
		t := p.peek(i)
		if t.isOp("(") {
			continue
		}
		return t.isKw("SELECT") || t.isKw("WITH") || t.isKw("VALUES") || t.isKw("TABLE")
	}
	return false
}

// tableAlias parses [AS] name [(col, …)].
func (p *parser) tableAlias() *Alias {
	pos := p.tok.pos()
	name := p.optAlias(true)
	if name.Empty() {
		return nil
	}
	a := &Alias{Pos: pos, Name: name}
	if p.isOp("(") {
		a.Columns = p.parenIdentList("column name")
	}
	return a
}

// asOf parses time travel, or returns nil:
//
//	FOR VERSION AS OF v | FOR TIMESTAMP AS OF ts   (Trino; Spark without FOR)
//	AT (VERSION => v) | AT (TIMESTAMP => ts)       (DuckDB)
func (p *parser) asOf() *AsOf {
	pos := p.tok.pos()
	switch {
	case p.isKw("FOR"), p.continuesTable() && !p.isKw("AT") && !p.isKw("TABLESAMPLE") && !p.isKw("CLONE"):
		p.acceptKw("FOR")
		a := &AsOf{Pos: pos}
		switch {
		case p.acceptKw("VERSION"):
			a.Kind = AsOfVersion
		case p.acceptKw("TIMESTAMP"), p.acceptKw("SYSTEM_TIME"):
			a.Kind = AsOfTimestamp
		default:
			p.fail()
		}
		p.expectKw("AS")
		p.expectKw("OF")
		a.Value = p.expr(0)
		return a
	case p.isKw("AT") && p.peek(1).isOp("("):
		p.next()
		p.next()
		a := &AsOf{Pos: pos}
		switch {
		case p.acceptKw("VERSION"):
			a.Kind = AsOfVersion
		case p.acceptKw("TIMESTAMP"):
			a.Kind = AsOfTimestamp
		default:
			p.fail()
		}
		p.expectOp("=>")
		a.Value = p.expr(0)
		p.expectOp(")")
		return a
	}
	return nil
}

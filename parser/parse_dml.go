package parser

func (p *parser) insert(w *With) Stmt {
	pos := p.expectKw("INSERT")
	if w != nil {
		pos = w.Pos
	}
	ins := &Insert{Pos: pos, With: w}
	p.expectKw("INTO")
	ins.Table = p.dottedName("table name")
	if p.acceptKw("AS") {
		ins.Alias = p.ident("alias")
	}
	if p.isOp("(") && !p.peekQueryAfterParen() {
		ins.Columns = p.parenIdentList("column name")
	}
	if p.isKw("BY") && p.peek(1).isKw("NAME") {
		p.next()
		p.next()
		ins.ByName = true
	}
	if p.isKw("DEFAULT") && p.peek(1).isKw("VALUES") {
		p.next()
		p.next()
		ins.DefaultValues = true
	} else {
		p.note("VALUES")
		p.note("SELECT")
		ins.Source = p.query()
	}
	if p.isKw("ON") && p.peek(1).isKw("CONFLICT") {
		ins.OnConflict = p.onConflict()
	}
	if p.acceptKw("RETURNING") {
		ins.Returning = p.selectItems()
	}
	return ins
}

// onConflict parses ON CONFLICT [(cols) | ON CONSTRAINT name] DO NOTHING |
// DO UPDATE SET … [WHERE …].
func (p *parser) onConflict() *OnConflict {
	oc := &OnConflict{Pos: p.tok.pos()}
	p.next()
	p.next()
	switch {
	case p.isOp("("):
		oc.Columns = p.parenIdentList("column name")
		if p.acceptKw("WHERE") {
			p.failMsg("ON CONFLICT (…) WHERE (a partial index's predicate) is not supported")
		}
	case p.isKw("ON") && p.peek(1).isKw("CONSTRAINT"):
		p.next()
		p.next()
		oc.Constraint = p.ident("constraint name")
	}
	p.expectKw("DO")
	if p.acceptKw("NOTHING") {
		oc.DoNothing = true
		return oc
	}
	p.note("NOTHING")
	p.expectKw("UPDATE")
	p.expectKw("SET")
	oc.Set = p.setList()
	if p.acceptKw("WHERE") {
		oc.Where = p.expr(0)
	}
	return oc
}

func (p *parser) update(w *With) Stmt {
	pos := p.expectKw("UPDATE")
	if w != nil {
		pos = w.Pos
	}
	u := &Update{Pos: pos, With: w}
	u.Table = p.dmlTarget()
	p.expectKw("SET")
	u.Set = p.setList()
	if p.acceptKw("FROM") {
		u.From = p.fromList()
	}
	if p.acceptKw("WHERE") {
		u.Where = p.expr(0)
	}
	if p.acceptKw("RETURNING") {
		u.Returning = p.selectItems()
	}
	return u
}

// dmlTarget parses the table of UPDATE/DELETE: name [[AS] alias].
func (p *parser) dmlTarget() *TableName {
	t := &TableName{Pos: p.tok.pos(), Name: p.dottedName("table name")}
	apos := p.tok.pos()
	if a := p.optAlias(true); !a.Empty() {
		t.Alias = &Alias{Pos: apos, Name: a}
	}
	return t
}

// setList parses col = value, ….
func (p *parser) setList() []*SetClause {
	var list []*SetClause
	for {
		s := &SetClause{Pos: p.tok.pos(), Column: p.dottedName("column name")}
		p.expectOp("=")
		s.Value = p.expr(0)
		list = append(list, s)
		if !p.acceptOp(",") {
			return list
		}
	}
}

func (p *parser) delete(w *With) Stmt {
	pos := p.expectKw("DELETE")
	if w != nil {
		pos = w.Pos
	}
	d := &Delete{Pos: pos, With: w}
	p.expectKw("FROM")
	d.Table = p.dmlTarget()
	if p.acceptKw("USING") {
		d.Using = p.fromList()
	}
	if p.acceptKw("WHERE") {
		d.Where = p.expr(0)
	}
	if p.acceptKw("RETURNING") {
		d.Returning = p.selectItems()
	}
	return d
}

func (p *parser) truncate() Stmt {
	t := &Truncate{Pos: p.expectKw("TRUNCATE")}
	p.acceptKw("TABLE")
	for {
		t.Tables = append(t.Tables, p.dottedName("table name"))
		if !p.acceptOp(",") {
			return t
		}
	}
}

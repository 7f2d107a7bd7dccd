package parser

import "strings"

// merge parses MERGE INTO target [[AS] alias] USING source ON cond
// WHEN … [RETURNING …].
func (p *parser) merge(w *With) Stmt {
	pos := p.expectKw("MERGE")
	if w != nil {
		pos = w.Pos
	}
	m := &Merge{Pos: pos, With: w}
	if p.acceptKwQuiet("WITH") {
		p.expectKw("SCHEMA")
		p.expectKw("EVOLUTION")
		m.SchemaEvolution = true
	}
	p.expectKw("INTO")
	m.Target = p.dottedName("table name")
	m.TargetAlias = p.optAlias(true)
	p.expectKw("USING")
	m.Source = p.tablePrimary()
	if _, ok := m.Source.(*ParenTable); ok {
		p.failMsg("a MERGE source must be a table, a subquery, VALUES or a table function")
	}
	p.expectKw("ON")
	m.On = p.expr(0)
	for p.isKw("WHEN") {
		m.Clauses = append(m.Clauses, p.mergeClause())
	}
	if len(m.Clauses) == 0 {
		p.expectKw("WHEN")
	}
	if p.acceptKw("RETURNING") {
		m.Returning = p.selectItems()
	}
	return m
}

func (p *parser) mergeClause() *MergeClause {
	c := &MergeClause{Pos: p.expectKw("WHEN")}
	if p.acceptKw("NOT") {
		p.expectKw("MATCHED")
		c.Kind = NotMatchedByTarget
		if p.acceptKw("BY") {
			if p.acceptKw("SOURCE") {
				c.Kind = NotMatchedBySource
			} else {
				p.expectKw("TARGET")
			}
		}
	} else {
		p.note("NOT")
		p.expectKw("MATCHED")
		c.Kind = Matched
	}
	if p.acceptKw("AND") {
		c.Cond = p.expr(0)
	}
	p.expectKw("THEN")
	c.Action = p.mergeAction(c.Kind)
	return c
}

// mergeAction parses the THEN part. In a WHEN NOT MATCHED [BY TARGET]
// clause there is no target row, so UPDATE and DELETE are refused here;
// every other combination parses and the MERGE engine judges it.
func (p *parser) mergeAction(kind MatchKind) MergeAction {
	pos := p.tok.pos()
	if kind == NotMatchedByTarget {
		p.note("INSERT")
		p.note("DO NOTHING")
		if p.isKw("DELETE") || p.isKw("UPDATE") {
			// The wording matches the merge-into guide's documented refusal.
			verb := upper(p.tok.val)
			p.failMsg(verb + " is not allowed in a NOT MATCHED merge clause: there is no target row to " +
				strings.ToLower(verb) + "; did you mean WHEN MATCHED or WHEN NOT MATCHED BY SOURCE?")
		}
	} else {
		p.note("UPDATE")
		p.note("DELETE")
		p.note("INSERT")
		p.note("DO NOTHING")
	}
	switch {
	case p.isKw("UPDATE"):
		p.next()
		u := &MergeUpdate{Pos: pos}
		if p.acceptKwQuiet("BY") {
			// DuckDB's UPDATE BY NAME
			p.expectKw("NAME")
			u.Star = true
			return u
		}
		p.expectKw("SET")
		if p.isOp("*") {
			p.next()
			u.Star = true
			u.Except = p.starExcept()
		} else {
			u.Set = p.setList()
		}
		return u
	case p.isKw("DELETE"):
		p.next()
		return &MergeDelete{Pos: pos}
	case p.isKw("INSERT"):
		p.next()
		ins := &MergeInsert{Pos: pos}
		switch {
		case p.isOp("*"):
			p.next()
			ins.Star = true
			ins.Except = p.starExcept()
			return ins
		case p.acceptKwQuiet("BY"):
			// DuckDB's INSERT BY NAME
			p.expectKw("NAME")
			ins.Star = true
			return ins
		case p.isKw("DEFAULT"):
			p.next()
			p.expectKw("VALUES")
			ins.DefaultValues = true
			return ins
		case p.isOp("("):
			ins.Columns = p.parenIdentList("column name")
		}
		if ins.Columns == nil {
			p.note(`"("`)
			p.note(`"*"`)
			p.note("DEFAULT VALUES")
		}
		valuesAt := p.p
		p.expectKw("VALUES")
		p.expectOp("(")
		ins.Values = p.exprList()
		p.expectOp(")")
		if len(ins.Columns) > 0 && len(ins.Columns) != len(ins.Values) {
			p.failAtToken(valuesAt, "INSERT names "+itoa(len(ins.Columns))+
				" columns but VALUES has "+itoa(len(ins.Values)))
		}
		return ins
	case p.isKw("DO"):
		p.next()
		p.expectKw("NOTHING")
		return &MergeDoNothing{Pos: pos}
	}
	p.fail()
	return nil
}

// starExcept parses the optional EXCEPT (col, …) after UPDATE SET * or
// INSERT * (Databricks' form).
func (p *parser) starExcept() []Ident {
	if !p.acceptKwQuiet("EXCEPT") {
		return nil
	}
	return p.parenIdentList("column name")
}

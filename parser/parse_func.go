package parser

import "strings"

// funcCall parses the argument list and trailing clauses of a call to name;
// the current token is "(".
func (p *parser) funcCall(pos Pos, name Name) Expr {
	f := &FuncCall{Pos: pos, Name: name}
	p.next() // (
	switch {
	case p.isOp("*"):
		p.next()
		f.Star = true
	case p.isOp(")"):
	default:
		if p.acceptKw("DISTINCT") {
			f.Distinct = true
		} else {
			p.acceptKw("ALL")
		}
		plain := len(name) == 1 && !name[0].Quoted
		switch {
		case plain && strings.EqualFold(name[0].Name, "substring"):
			f.Args = p.substringArgs()
		case plain && strings.EqualFold(name[0].Name, "trim"):
			f.Name[0].Name, f.Args = p.trimArgs()
		case plain && strings.EqualFold(name[0].Name, "position"):
			// position(sub IN s)
			first := p.expr(precIn + 1)
			if p.acceptKwQuiet("IN") {
				f.Args = []Expr{first, p.expr(0)}
			} else {
				f.Args = []Expr{first}
				for p.acceptOp(",") {
					f.Args = append(f.Args, p.arg())
				}
			}
		default:
			f.Args = p.argList()
		}
		if p.isKw("ORDER") {
			p.next()
			p.expectKw("BY")
			f.OrderBy = p.orderItems()
		}
	}
	p.expectOp(")")
	if p.isKw("WITHIN") && p.peek(1).isKw("GROUP") && p.peek(2).isOp("(") {
		p.next()
		p.next()
		p.expectOp("(")
		p.expectKw("ORDER")
		p.expectKw("BY")
		f.WithinGroup = p.orderItems()
		p.expectOp(")")
	}
	if p.isKw("FILTER") && p.peek(1).isOp("(") {
		p.next()
		p.next()
		p.expectKw("WHERE")
		f.Filter = p.expr(0)
		p.expectOp(")")
	}
	if p.isKw("OVER") {
		p.next()
		if p.isOp("(") {
			f.Over = p.windowSpec()
		} else {
			f.OverName = p.ident("window name")
		}
	}
	return f
}

// substringArgs parses the arguments of substring, accepting the SQL
// standard spelling substring(s FROM start [FOR count]) as well as a plain
// list. The standard spelling becomes the plain one, as in PostgreSQL:
// substring(s, start[, count]), with start 1 when only FOR is given.
func (p *parser) substringArgs() []Expr {
	first := p.expr(0)
	switch {
	case p.acceptKwQuiet("FROM"):
		args := []Expr{first, p.expr(0)}
		if p.acceptKwQuiet("FOR") {
			args = append(args, p.expr(0))
		}
		return args
	case p.acceptKwQuiet("FOR"):
		one := &Literal{Pos: p.tok.pos(), Kind: LitInteger, Value: "1"}
		return []Expr{first, one, p.expr(0)}
	}
	args := []Expr{first}
	for p.acceptOp(",") {
		args = append(args, p.arg())
	}
	return args
}

// trimArgs parses trim's SQL standard forms, trim([LEADING | TRAILING |
// BOTH] [chars] FROM s) and trim([LEADING | TRAILING | BOTH] s [, chars]),
// into the function PostgreSQL runs: btrim, ltrim or rtrim(s[, chars]).
func (p *parser) trimArgs() (string, []Expr) {
	fn := "btrim"
	switch {
	case p.acceptKwQuiet("LEADING"):
		fn = "ltrim"
	case p.acceptKwQuiet("TRAILING"):
		fn = "rtrim"
	case p.acceptKwQuiet("BOTH"):
	}
	if p.acceptKwQuiet("FROM") {
		return fn, []Expr{p.expr(0)}
	}
	first := p.expr(0)
	if p.acceptKwQuiet("FROM") {
		return fn, []Expr{p.expr(0), first}
	}
	args := []Expr{first}
	for p.acceptOp(",") {
		args = append(args, p.expr(0))
	}
	return fn, args
}

// argList parses function arguments, each an expression or name => value.
func (p *parser) argList() []Expr {
	var args []Expr
	for {
		args = append(args, p.arg())
		if !p.isOp(",") {
			return args
		}
		p.next()
	}
}

func (p *parser) arg() Expr {
	if (p.tok.kind == tWord || p.tok.kind == tQIdent) && (p.peek(1).isOp("=>") || p.peek(1).isOp(":=")) {
		pos := p.tok.pos()
		name := p.label("argument name")
		p.next() // => or :=
		return &NamedArg{Pos: pos, Name: name, Value: p.expr(0)}
	}
	return p.expr(0)
}

// windowSpec parses ( [ref] [PARTITION BY …] [ORDER BY …] [frame] ).
func (p *parser) windowSpec() *WindowSpec {
	w := &WindowSpec{Pos: p.tok.pos()}
	p.expectOp("(")
	if p.isIdent() && !p.isKw("PARTITION") && !p.isKw("ORDER") && !p.isKw("ROWS") &&
		!p.isKw("RANGE") && !p.isKw("GROUPS") {
		w.Ref = p.ident("window name")
	}
	p.note("PARTITION BY")
	if p.isKw("PARTITION") {
		p.next()
		p.expectKw("BY")
		w.PartitionBy = p.exprList()
	}
	p.note("ORDER BY")
	if p.isKw("ORDER") {
		p.next()
		p.expectKw("BY")
		w.OrderBy = p.orderItems()
	}
	if p.isKw("ROWS") || p.isKw("RANGE") || p.isKw("GROUPS") {
		w.Frame = p.frame()
	}
	p.expectOp(")")
	return w
}

func (p *parser) frame() *Frame {
	f := &Frame{Pos: p.tok.pos()}
	switch {
	case p.acceptKw("ROWS"):
		f.Unit = FrameRows
	case p.acceptKw("RANGE"):
		f.Unit = FrameRange
	default:
		p.expectKw("GROUPS")
		f.Unit = FrameGroups
	}
	if p.acceptKw("BETWEEN") {
		f.Start = p.frameBound()
		p.expectKw("AND")
		f.End = p.frameBound()
	} else {
		f.Start = p.frameBound()
	}
	if p.acceptKw("EXCLUDE") {
		switch {
		case p.acceptKw("CURRENT"):
			p.expectKw("ROW")
			f.Exclude = "CURRENT ROW"
		case p.acceptKw("GROUP"):
			f.Exclude = "GROUP"
		case p.acceptKw("TIES"):
			f.Exclude = "TIES"
		default:
			p.expectKw("NO")
			p.expectKw("OTHERS")
			f.Exclude = "NO OTHERS"
		}
	}
	return f
}

func (p *parser) frameBound() *FrameBound {
	b := &FrameBound{Pos: p.tok.pos()}
	switch {
	case p.isKw("UNBOUNDED"):
		p.next()
		if p.acceptKw("PRECEDING") {
			b.Kind = UnboundedPreceding
		} else {
			p.expectKw("FOLLOWING")
			b.Kind = UnboundedFollowing
		}
	case p.isKw("CURRENT"):
		p.next()
		p.expectKw("ROW")
		b.Kind = CurrentRow
	default:
		b.Offset = p.expr(precOther)
		if p.acceptKw("PRECEDING") {
			b.Kind = Preceding
		} else {
			p.expectKw("FOLLOWING")
			b.Kind = Following
		}
	}
	return b
}

// orderItems parses expr [ASC|DESC] [NULLS FIRST|LAST], ….
func (p *parser) orderItems() []*OrderItem {
	var items []*OrderItem
	for {
		it := &OrderItem{Pos: p.tok.pos()}
		if len(items) == 0 && p.isKw("ALL") {
			// ORDER BY ALL (DuckDB): the only item
			it.Expr = &AllColumns{Pos: it.Pos}
			p.next()
		} else {
			it.Expr = p.expr(0)
		}
		if p.acceptKw("DESC") {
			it.Desc = true
		} else {
			p.acceptKw("ASC")
		}
		if p.acceptKw("NULLS") {
			if p.acceptKw("FIRST") {
				it.Nulls = NullsFirst
			} else {
				p.expectKw("LAST")
				it.Nulls = NullsLast
			}
		}
		items = append(items, it)
		if !p.isOp(",") {
			return items
		}
		p.next()
	}
}

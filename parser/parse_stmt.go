package parser

import "strings"

// statementStarts lists the words a statement may begin with, for errors.
var statementStarts = []string{"SELECT", "WITH", "VALUES", "INSERT", "UPDATE", "DELETE",
	"MERGE", "CREATE", "DROP", "ALTER", "TRUNCATE", "COPY", "EXPLAIN", "DESCRIBE", "SHOW",
	"SET", "BEGIN", "COMMIT", "ROLLBACK", "CALL"}

// statement dispatches on the first word.
func (p *parser) statement() Stmt {
	t := *p.tok
	switch {
	case t.isKw("SELECT"), t.isKw("VALUES"), t.isKw("TABLE"), t.isOp("("):
		return p.query()
	case t.isKw("WITH"):
		return p.withStatement()
	case t.isKw("INSERT"):
		return p.insert(nil)
	case t.isKw("UPDATE"):
		return p.update(nil)
	case t.isKw("DELETE"):
		return p.delete(nil)
	case t.isKw("MERGE"):
		return p.merge(nil)
	case t.isKw("TRUNCATE"):
		return p.truncate()
	case t.isKw("CREATE"):
		return p.create()
	case t.isKw("DROP"):
		return p.drop()
	case t.isKw("CALL"):
		c := &Call{Pos: p.expectKw("CALL"), Name: p.dottedName("procedure name")}
		p.expectOp("(")
		if !p.isOp(")") {
			c.Args = p.argList()
		}
		p.expectOp(")")
		return c
	case t.isKw("ALTER"):
		return p.alterTable()
	case t.isKw("BEGIN"), t.isKw("START"):
		return p.begin()
	case t.isKw("COMMIT"), t.isKw("END"):
		pos := t.pos()
		p.next()
		p.txnNoise()
		return &Commit{Pos: pos}
	case t.isKw("ROLLBACK"), t.isKw("ABORT"):
		pos := t.pos()
		p.next()
		p.txnNoise()
		return &Rollback{Pos: pos}
	case t.isKw("EXPLAIN"):
		pos := t.pos()
		p.next()
		e := &Explain{Pos: pos}
		e.Analyze = p.acceptKw("ANALYZE") || p.acceptKw("ANALYSE")
		p.enter()
		e.Stmt = p.statement()
		p.leave()
		return e
	case t.isKw("SHOW"):
		return p.show()
	case t.isKw("DESCRIBE"), t.isKw("DESC"):
		pos := t.pos()
		p.next()
		return &Describe{Pos: pos, Table: p.dottedName("table name")}
	case t.isKw("COPY"):
		return p.copyStmt()
	case t.isKw("SET"):
		return p.setVar()
	case t.isKw("RESET") && p.peek(1).kind != tEOF && !p.peek(1).isOp(";"):
		// PostgreSQL's RESET name: SET name TO DEFAULT
		pos := t.pos()
		p.next()
		return &SetVar{Pos: pos, Name: p.dottedName("setting name"), Values: []Expr{&Default{Pos: pos}}}
	}
	for _, s := range statementStarts {
		p.note(s)
	}
	p.fail()
	return nil
}

// withStatement parses WITH … followed by a query or a DML statement.
func (p *parser) withStatement() Stmt {
	pos := p.tok.pos()
	w := p.with()
	switch {
	case p.isKw("INSERT"):
		return p.insert(w)
	case p.isKw("UPDATE"):
		return p.update(w)
	case p.isKw("DELETE"):
		return p.delete(w)
	case p.isKw("MERGE"):
		return p.merge(w)
	}
	p.note("INSERT")
	p.note("UPDATE")
	p.note("DELETE")
	p.note("MERGE")
	q := &Query{Pos: pos, With: w, Body: p.setExpr()}
	p.queryTail(q)
	return q
}

func (p *parser) txnNoise() {
	if !p.acceptKw("TRANSACTION") {
		p.acceptKw("WORK")
	}
}

func (p *parser) begin() Stmt {
	b := &Begin{Pos: p.tok.pos()}
	if p.acceptKw("START") {
		p.expectKw("TRANSACTION")
	} else {
		p.expectKw("BEGIN")
		p.txnNoise()
	}
	b.Isolation, b.ReadOnly = p.txnModes()
	return b
}

// txnModes parses PostgreSQL's transaction modes, separated by commas:
// ISOLATION LEVEL {SERIALIZABLE | REPEATABLE READ | READ COMMITTED | READ
// UNCOMMITTED}, READ WRITE, READ ONLY, [NOT] DEFERRABLE.
func (p *parser) txnModes() (isolation string, readOnly bool) {
	for {
		switch {
		case p.acceptKw("ISOLATION"):
			p.expectKw("LEVEL")
			switch {
			case p.acceptKw("SERIALIZABLE"):
				isolation = "serializable"
			case p.acceptKw("REPEATABLE"):
				p.expectKw("READ")
				isolation = "repeatable read"
			case p.acceptKw("READ"):
				if p.acceptKw("COMMITTED") {
					isolation = "read committed"
				} else {
					p.expectKw("UNCOMMITTED")
					isolation = "read uncommitted"
				}
			default:
				p.fail()
			}
		case p.isKw("READ") && (p.peek(1).isKw("ONLY") || p.peek(1).isKw("WRITE")):
			p.next()
			readOnly = p.acceptKw("ONLY")
			if !readOnly {
				p.expectKw("WRITE")
			}
		case p.isKw("NOT") && p.peek(1).isKw("DEFERRABLE"):
			p.next()
			p.next()
		case p.acceptKw("DEFERRABLE"):
		default:
			return isolation, readOnly
		}
		p.acceptOp(",")
	}
}

func (p *parser) show() Stmt {
	pos := p.expectKw("SHOW")
	if p.acceptKwQuiet("VIEWS") {
		s := &ShowTables{Pos: pos, Views: true}
		if p.acceptKw("FROM") || p.acceptKw("IN") {
			s.From = p.dottedName("schema name")
		}
		return s
	}
	if p.acceptKw("TABLES") {
		s := &ShowTables{Pos: pos}
		if p.acceptKw("FROM") || p.acceptKw("IN") {
			s.From = p.dottedName("schema name")
		}
		return s
	}
	if p.acceptKw("ALL") {
		return &Show{Pos: pos, All: true}
	}
	if p.acceptKwQuiet("TBLPROPERTIES") {
		s := &ShowTblProperties{Pos: pos, Table: p.dottedName("table name")}
		if p.acceptOp("(") {
			if p.tok.kind != tString {
				p.note("property name")
				p.fail()
			}
			s.Key = p.tok.val
			p.next()
			p.expectOp(")")
		}
		return s
	}
	if p.isKw("CREATE") && p.peek(1).isKw("TABLE") {
		p.next()
		p.next()
		return &ShowCreateTable{Pos: pos, Table: p.dottedName("table name")}
	}
	if p.isKw("TRANSACTION") && p.peek(1).isKw("ISOLATION") {
		// SHOW TRANSACTION ISOLATION LEVEL is transaction_isolation
		ipos := p.tok.pos()
		p.next()
		p.next()
		p.expectKw("LEVEL")
		return &Show{Pos: pos, Name: Name{{Pos: ipos, Name: "transaction_isolation"}}}
	}
	return &Show{Pos: pos, Name: p.dottedName("setting name")}
}

func (p *parser) setVar() Stmt {
	s := &SetVar{Pos: p.expectKw("SET")}
	if p.acceptKw("LOCAL") {
		s.Local = true
	} else {
		p.acceptKw("SESSION")
	}
	// SET [SESSION CHARACTERISTICS AS] TRANSACTION modes: the settings
	// [default_]transaction_isolation and [default_]transaction_read_only
	prefix := ""
	if p.isKw("CHARACTERISTICS") && p.peek(1).isKw("AS") {
		p.next()
		p.next()
		prefix = "default_"
		if !p.isKw("TRANSACTION") {
			p.note("TRANSACTION")
			p.fail()
		}
	}
	if p.isKw("TRANSACTION") && (prefix != "" || p.peek(1).isKw("ISOLATION") || p.peek(1).isKw("READ")) {
		tpos := p.tok.pos()
		p.next()
		iso, ro := p.txnModes()
		switch {
		case iso != "":
			s.Name = Name{{Pos: tpos, Name: prefix + "transaction_isolation"}}
			s.Values = []Expr{&Literal{Pos: tpos, Kind: LitString, Value: iso}}
		default:
			v := "off"
			if ro {
				v = "on"
			}
			s.Name = Name{{Pos: tpos, Name: prefix + "transaction_read_only"}}
			s.Values = []Expr{&Literal{Pos: tpos, Kind: LitString, Value: v}}
		}
		return s
	}
	s.Name = p.dottedName("setting name")
	if !p.acceptOp("=") {
		p.expectKw("TO")
	}
	// a value is an expression, or ON, which PostgreSQL takes here though
	// it reserves it (SET standard_conforming_strings = on)
	for {
		if p.isKw("ON") {
			s.Values = append(s.Values, &Literal{Pos: p.tok.pos(), Kind: LitString, Value: "on"})
			p.next()
		} else {
			s.Values = append(s.Values, p.expr(0))
		}
		if !p.isOp(",") {
			return s
		}
		p.next()
	}
}

func (p *parser) copyStmt() Stmt {
	c := &Copy{Pos: p.expectKw("COPY")}
	if p.isOp("(") {
		p.next()
		if p.isKw("INSERT") || p.isKw("UPDATE") || p.isKw("DELETE") || p.isKw("MERGE") {
			c.DML = p.statement()
		} else {
			c.Query = p.query()
		}
		p.expectOp(")")
		p.expectKw("TO")
		c.To = true
	} else {
		c.Table = p.dottedName("table name")
		if p.isOp("(") {
			c.Columns = p.parenIdentList("column name")
		}
		if p.acceptKw("TO") {
			c.To = true
		} else {
			p.expectKw("FROM")
		}
	}
	switch {
	case !c.To && p.acceptKw("STDIN"), c.To && p.acceptKw("STDOUT"):
		c.Stdio = true
	case p.tok.kind == tString:
		c.File = p.tok.val
		p.next()
	default:
		p.note("file name string")
		p.fail()
	}
	p.acceptKw("WITH")
	if !p.isOp("(") {
		c.Options = p.legacyCopyOptions()
		return c
	}
	if p.acceptOp("(") {
		for {
			if p.tok.kind != tWord {
				p.note("option name")
				p.fail()
			}
			o := &CopyOption{Pos: p.tok.pos(), Name: upper(p.tok.val)}
			p.next()
			if !p.isOp(",") && !p.isOp(")") {
				o.Value = p.expr(0)
			}
			c.Options = append(c.Options, o)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
	return c
}

// legacyCopyOptions parses the option words COPY took before PostgreSQL
// 9.0, which psql's \copy still passes on: CSV, BINARY, HEADER,
// DELIMITER [AS] 'c', NULL [AS] 's', QUOTE [AS] 'c', ESCAPE [AS] 'c'. They
// become the parenthesised form's options.
func (p *parser) legacyCopyOptions() []*CopyOption {
	var opts []*CopyOption
	for p.tok.kind == tWord {
		pos := p.tok.pos()
		word := upper(p.tok.val)
		switch word {
		case "CSV", "BINARY", "TEXT":
			p.next()
			opts = append(opts, &CopyOption{Pos: pos, Name: "FORMAT", Value: &Literal{Pos: pos, Kind: LitString, Value: strings.ToLower(word)}})
		case "HEADER":
			p.next()
			opts = append(opts, &CopyOption{Pos: pos, Name: "HEADER"})
		case "DELIMITER", "NULL", "QUOTE", "ESCAPE":
			p.next()
			p.acceptKw("AS")
			if p.tok.kind != tString {
				p.note("string")
				p.fail()
			}
			opts = append(opts, &CopyOption{Pos: pos, Name: word, Value: &Literal{Pos: p.tok.pos(), Kind: LitString, Value: p.tok.val}})
			p.next()
		default:
			return opts
		}
	}
	return opts
}

package parser

import (
	"strconv"
	"strings"
)

// upper upper-cases ASCII letters only, as SQL keyword folding does; other
// bytes (including invalid UTF-8) pass through unchanged.
func upper(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
func itoa(n int) string { return strconv.Itoa(n) }

// create parses CREATE [OR REPLACE] [TEMP[ORARY]] TABLE …, CREATE VIEW … and
// CREATE SCHEMA ….
func (p *parser) create() Stmt {
	pos := p.expectKw("CREATE")
	orReplace := false
	if p.acceptKw("OR") {
		p.expectKw("REPLACE")
		orReplace = true
	}
	if !orReplace && p.acceptKw("SCHEMA") {
		s := &CreateSchema{Pos: pos}
		s.IfNotExists = p.ifNotExists()
		s.Name = p.dottedName("schema name")
		return s
	}
	temporary := p.acceptKwQuiet("TEMP") || p.acceptKwQuiet("TEMPORARY")
	if !temporary && p.acceptKwQuiet("VIEW") {
		v := &CreateView{Pos: pos, OrReplace: orReplace}
		v.IfNotExists = p.ifNotExists()
		v.Name = p.dottedName("view name")
		if p.isOp("(") {
			v.Columns = p.parenIdentList("column name")
		}
		p.expectKw("AS")
		v.Query = p.query()
		return v
	}
	p.expectKw("TABLE")
	c := &CreateTable{Pos: pos, OrReplace: orReplace, Temporary: temporary}
	c.IfNotExists = p.ifNotExists()
	c.Name = p.dottedName("table name")
	if p.acceptKw("CLONE") {
		src := &TableName{Pos: p.tok.pos(), Name: p.dottedName("table name")}
		src.AsOf = p.asOf()
		c.Clone = src
		return c
	}
	if p.isOp("(") && !p.peekQueryAfterParen() {
		p.next()
		for {
			if p.isKw("CONSTRAINT") || p.isKw("CHECK") || p.isKw("UNIQUE") || p.isKw("PRIMARY") {
				c.Constraints = append(c.Constraints, p.tableConstraint())
			} else {
				c.Columns = append(c.Columns, p.columnDef())
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
	if p.acceptKw("PARTITIONED") {
		p.expectKw("BY")
		c.PartitionBy = p.partitionFields()
	}
	if p.acceptKw("WITH") {
		c.Properties = p.properties()
	}
	if c.Columns == nil {
		p.expectKw("AS")
		c.AsQuery = p.query()
	}
	return c
}

func (p *parser) ifNotExists() bool {
	if p.acceptKw("IF") {
		p.expectKw("NOT")
		p.expectKw("EXISTS")
		return true
	}
	return false
}

func (p *parser) ifExists() bool {
	if p.acceptKw("IF") {
		p.expectKw("EXISTS")
		return true
	}
	return false
}

// columnDef parses name type [NOT NULL | NULL] [DEFAULT e] and column
// constraints, [CONSTRAINT name] PRIMARY KEY | UNIQUE | CHECK (e), in any
// order.
func (p *parser) columnDef() *ColumnDef { return p.columnDefNamed(p.ident("column name")) }

// columnPath parses a column name, or the dotted path of a struct's field
// (s.inner.c): the struct path, then the last name.
func (p *parser) columnPath() ([]Ident, Ident) {
	var path []Ident
	name := p.ident("column name")
	for p.isOp(".") {
		p.next()
		path = append(path, name)
		name = p.label("field name")
	}
	return path, name
}

// columnDefNamed parses a column definition after its name.
func (p *parser) columnDefNamed(name Ident) *ColumnDef {
	d := &ColumnDef{Pos: name.Pos, Name: name}
	d.Type = p.typeName()
	for {
		pos := p.tok.pos()
		var name Ident
		if p.acceptKw("CONSTRAINT") {
			name = p.ident("constraint name")
		}
		switch {
		case name.Name == "" && p.acceptKw("NOT"):
			p.expectKw("NULL")
			d.NotNull = true
		case name.Name == "" && p.acceptKw("NULL"):
			d.NotNull = false
		case name.Name == "" && p.acceptKw("DEFAULT"):
			d.Default = p.expr(precOther)
		case p.acceptKw("PRIMARY"):
			p.expectKw("KEY")
			d.PrimaryKey = true
			d.Constraints = append(d.Constraints, &Constraint{Pos: pos, Name: name, Kind: ConstraintPrimaryKey, Columns: []Ident{d.Name}})
		case p.acceptKw("UNIQUE"):
			d.Constraints = append(d.Constraints, &Constraint{Pos: pos, Name: name, Kind: ConstraintUnique, Columns: []Ident{d.Name}})
		case p.acceptKw("CHECK"):
			d.Constraints = append(d.Constraints, &Constraint{Pos: pos, Name: name, Kind: ConstraintCheck, Check: p.checkExpr()})
		default:
			if name.Name != "" {
				p.note("PRIMARY KEY")
				p.note("UNIQUE")
				p.note("CHECK")
				p.fail()
			}
			return d
		}
	}
}

// tableConstraint parses [CONSTRAINT name] CHECK (e) | UNIQUE (cols) |
// PRIMARY KEY (cols).
func (p *parser) tableConstraint() *Constraint {
	c := &Constraint{Pos: p.tok.pos()}
	if p.acceptKw("CONSTRAINT") {
		c.Name = p.ident("constraint name")
	}
	switch {
	case p.acceptKw("CHECK"):
		c.Kind, c.Check = ConstraintCheck, p.checkExpr()
	case p.acceptKw("UNIQUE"):
		c.Kind, c.Columns = ConstraintUnique, p.parenIdentList("column name")
	case p.acceptKw("PRIMARY"):
		p.expectKw("KEY")
		c.Kind, c.Columns = ConstraintPrimaryKey, p.parenIdentList("column name")
	default:
		p.note("CHECK")
		p.note("UNIQUE")
		p.note("PRIMARY KEY")
		p.fail()
	}
	return c
}

// checkExpr parses CHECK's ( e ).
func (p *parser) checkExpr() Expr {
	p.expectOp("(")
	e := p.expr(0)
	p.expectOp(")")
	return e
}

// partitionTransforms maps the accepted transform spellings (Iceberg's and
// Spark's plurals) to transforms.
var partitionTransforms = map[string]Transform{
	"identity": TransformIdentity, "year": TransformYear, "years": TransformYear, "month": TransformMonth, "months": TransformMonth,
	"day": TransformDay, "days": TransformDay, "hour": TransformHour, "hours": TransformHour, "bucket": TransformBucket, "truncate": TransformTruncate,
}

// partitionFields parses ( col | transform(col) | bucket(N, col) | truncate(W, col), … ).
func (p *parser) partitionFields() []*PartitionField {
	p.expectOp("(")
	var list []*PartitionField
	for {
		list = append(list, p.partitionField())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return list
}

// partitionField parses col | transform(col) | bucket(N, col) | truncate(W, col).
func (p *parser) partitionField() *PartitionField {
	f := &PartitionField{Pos: p.tok.pos()}
	if p.peek(1).isOp("(") && p.tok.kind == tWord {
		name := strings.ToLower(p.tok.val)
		tr, ok := partitionTransforms[name]
		if !ok {
			p.failMsg("unknown partition transform " + strconv.Quote(p.tok.val) +
				"; expected one of year, month, day, hour, bucket, truncate, identity")
		}
		f.Transform = tr
		p.next()
		p.next()
		if tr == TransformBucket || tr == TransformTruncate {
			if p.tok.kind != tInteger {
				p.note("integer")
				p.fail()
			}
			n, err := strconv.Atoi(p.tok.val)
			if err != nil || n <= 0 || n > 1<<30 {
				p.failMsg(name + " parameter must be a positive integer")
			}
			f.Param = n
			p.next()
			p.expectOp(",")
		}
		f.Column = p.ident("column name")
		p.expectOp(")")
	} else {
		f.Transform = TransformIdentity
		f.Column = p.ident("column name")
	}
	return f
}

// refAction parses Spark's branch and tag DDL (RefAction).
func (p *parser) refAction(pos Pos) *RefAction {
	r := &RefAction{Pos: pos}
	switch {
	case p.acceptKw("DROP"):
		r.Drop = true
	case p.acceptKw("REPLACE"):
		r.Replace = true
	default:
		p.expectKw("CREATE")
		r.Create = true
		if p.acceptKw("OR") {
			p.expectKw("REPLACE")
			r.Replace = true
		}
	}
	if p.acceptKwQuiet("TAG") {
		r.Tag = true
	} else {
		p.expectKw("BRANCH")
	}
	if r.Drop {
		r.IfExists = p.ifExists()
		r.Name = p.ident("branch or tag name")
		return r
	}
	if r.Create && !r.Replace {
		r.IfNotExists = p.ifNotExists()
	}
	r.Name = p.ident("branch or tag name")
	if p.acceptKw("AS") {
		p.expectKw("OF")
		p.expectKw("VERSION")
		v := p.refNumber("snapshot id")
		r.Version = &v
	}
	if p.acceptKwQuiet("RETAIN") {
		r.Retain = p.refDuration()
	}
	if !r.Tag && p.acceptKw("WITH") {
		p.expectKw("SNAPSHOT")
		p.expectKw("RETENTION")
		if p.tok.kind == tInteger && p.peek(1).isKw("SNAPSHOTS") {
			n := p.refNumber("snapshot count")
			p.next()
			r.MinSnapshots = &n
		}
		if p.tok.kind == tInteger || r.MinSnapshots == nil {
			r.MaxSnapshotAge = p.refDuration()
		}
	}
	return r
}

// refNumber reads a non-negative integer of ref DDL.
func (p *parser) refNumber(what string) int64 {
	if p.tok.kind != tInteger {
		p.note(what)
		p.fail()
	}
	n, err := strconv.ParseInt(p.tok.val, 10, 64)
	if err != nil {
		p.failMsg(what + " out of range: " + p.tok.val)
	}
	p.next()
	return n
}

// refDuration reads n DAYS|HOURS|MINUTES.
func (p *parser) refDuration() *Duration {
	d := &Duration{N: p.refNumber("number of days, hours or minutes")}
	for _, u := range []string{"DAYS", "HOURS", "MINUTES"} {
		if p.acceptKwQuiet(u) {
			d.Unit = u
			return d
		}
		p.note(u)
	}
	p.fail()
	return nil
}

// writeOrder parses the rest of Spark's ALTER TABLE … WRITE: [LOCALLY]
// ORDERED BY keys, DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY keys], or
// UNORDERED.
func (p *parser) writeOrder(pos Pos) *WriteOrder {
	w := &WriteOrder{Pos: pos}
	switch {
	case p.acceptKwQuiet("UNORDERED"):
		w.Unordered = true
		return w
	case p.acceptKwQuiet("DISTRIBUTED"):
		p.expectKw("BY")
		p.expectKw("PARTITION")
		w.Distributed = true
		if !p.acceptKwQuiet("LOCALLY") {
			return w
		}
		w.Locally = true
	case p.acceptKwQuiet("LOCALLY"):
		w.Locally = true
	}
	p.expectKw("ORDERED")
	p.expectKw("BY")
	for {
		k := &WriteOrderKey{Field: p.partitionField()}
		if p.acceptKw("DESC") {
			k.Desc = true
		} else {
			p.acceptKw("ASC")
		}
		if p.acceptKw("NULLS") {
			if p.acceptKw("FIRST") {
				k.NullsFirst, k.NullsSet = true, true
			} else {
				p.expectKw("LAST")
				k.NullsSet = true
			}
		}
		w.Keys = append(w.Keys, k)
		if !p.acceptOp(",") {
			return w
		}
	}
}

// properties parses ( key = value, … ); a key is an identifier, a quoted
// identifier or a string literal.
func (p *parser) properties() []*Property {
	p.expectOp("(")
	var list []*Property
	for {
		list = append(list, p.property())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return list
}

// property is key = value, the key a name (dotted bare words such as
// write.merge.mode), a quoted identifier or a string.
func (p *parser) property() *Property {
	pr := &Property{Pos: p.tok.pos()}
	switch p.tok.kind {
	case tWord, tQIdent, tString:
		if p.tok.val == "" {
			p.failMsg("property name must not be empty")
		}
		pr.Key = p.tok.val
		p.next()
		// dotted bare keys: write.merge.mode
		for p.tok.kind == tOp && p.tok.val == "." && p.peek(1).kind == tWord {
			p.next()
			pr.Key += "." + p.tok.val
			p.next()
		}
	default:
		p.note("property name")
		p.fail()
	}
	p.expectOp("=")
	pr.Value = p.expr(0)
	return pr
}

// drop parses DROP TABLE … and DROP SCHEMA ….
func (p *parser) drop() Stmt {
	pos := p.expectKw("DROP")
	if p.acceptKw("SCHEMA") {
		s := &DropSchema{Pos: pos, IfExists: p.ifExists(), Name: p.dottedName("schema name")}
		s.Cascade = p.cascade()
		return s
	}
	if p.acceptKwQuiet("VIEW") {
		v := &DropView{Pos: pos, IfExists: p.ifExists(), Name: p.dottedName("view name")}
		v.Cascade = p.cascade()
		return v
	}
	p.expectKw("TABLE")
	d := &DropTable{Pos: pos, IfExists: p.ifExists()}
	for {
		d.Names = append(d.Names, p.dottedName("table name"))
		if !p.acceptOp(",") {
			break
		}
	}
	d.Cascade = p.cascade()
	return d
}

func (p *parser) cascade() bool {
	if p.acceptKw("CASCADE") {
		return true
	}
	p.acceptKw("RESTRICT")
	return false
}

// alterTable parses ALTER TABLE [IF EXISTS] name action [, action …].
func (p *parser) alterTable() Stmt {
	a := &AlterTable{Pos: p.expectKw("ALTER")}
	p.expectKw("TABLE")
	a.IfExists = p.ifExists()
	a.Name = p.dottedName("table name")
	pos := p.tok.pos()
	switch {
	case p.acceptKw("EXECUTE"):
		e := &ExecuteProcedure{Pos: pos, Procedure: p.ident("procedure name")}
		if p.acceptOp("(") {
			if !p.isOp(")") {
				e.Args = p.argList()
			}
			p.expectOp(")")
		}
		a.Actions = []AlterAction{e}
		return a
	case p.isKw("RENAME") && p.peek(1).isKw("TO"):
		p.next()
		p.next()
		a.Actions = []AlterAction{&RenameTable{Pos: pos, NewName: p.dottedName("table name")}}
		return a
	case p.acceptKw("RENAME"):
		p.acceptKw("COLUMN")
		r := &RenameColumn{Pos: pos}
		r.Parent, r.Old = p.columnPath()
		p.expectKw("TO")
		r.New = p.ident("column name")
		a.Actions = []AlterAction{r}
		return a
	}
	for {
		a.Actions = append(a.Actions, p.alterAction())
		if !p.acceptOp(",") {
			return a
		}
	}
}

func (p *parser) alterAction() AlterAction {
	pos := p.tok.pos()
	switch {
	case p.isKw("ADD") && p.peek(1).isKw("PARTITION") && p.peek(2).isKw("FIELD"):
		p.next()
		p.next()
		p.next()
		a := &AddPartitionField{Pos: pos, Field: p.partitionField()}
		if p.acceptKw("AS") {
			a.Name = p.ident("partition field name")
		}
		return a
	case p.isKw("DROP") && p.peek(1).isKw("PARTITION") && p.peek(2).isKw("FIELD"):
		p.next()
		p.next()
		p.next()
		return &DropPartitionField{Pos: pos, Field: p.partitionField()}
	case p.isKw("REPLACE") && p.peek(1).isKw("PARTITION") && p.peek(2).isKw("FIELD"):
		p.next()
		p.next()
		p.next()
		r := &ReplacePartitionField{Pos: pos, Old: p.partitionField()}
		p.expectKw("WITH")
		r.New = p.partitionField()
		if p.acceptKw("AS") {
			r.Name = p.ident("partition field name")
		}
		return r
	case p.acceptKwQuiet("WRITE"):
		return p.writeOrder(pos)
	case (p.isKw("CREATE") || p.isKw("REPLACE") || p.isKw("DROP")) && (p.peek(1).isKw("BRANCH") || p.peek(1).isKw("TAG")) &&
		(p.peek(2).kind == tWord || p.peek(2).kind == tQIdent), // not DROP branch, a column
		p.isKw("CREATE") && p.peek(1).isKw("OR") && p.peek(2).isKw("REPLACE") && (p.peek(3).isKw("BRANCH") || p.peek(3).isKw("TAG")):
		return p.refAction(pos)
	case p.isKw("ADD") && (p.peek(1).isKw("CONSTRAINT") || p.peek(1).isKw("CHECK") || p.peek(1).isKw("UNIQUE") || p.peek(1).isKw("PRIMARY")):
		p.next()
		return &AddConstraint{Pos: pos, Constraint: p.tableConstraint()}
	case p.isKw("DROP") && p.peek(1).isKw("CONSTRAINT"):
		p.next()
		p.next()
		d := &DropConstraint{Pos: pos, IfExists: p.ifExists()}
		d.Name = p.ident("constraint name")
		return d
	case p.acceptKw("ADD"):
		p.acceptKw("COLUMN")
		a := &AddColumn{Pos: pos, IfNotExists: p.ifNotExists()}
		var name Ident
		a.Parent, name = p.columnPath()
		a.Column = p.columnDefNamed(name)
		return a
	case p.acceptKw("DROP"):
		p.acceptKw("COLUMN")
		d := &DropColumn{Pos: pos, IfExists: p.ifExists()}
		d.Parent, d.Name = p.columnPath()
		return d
	case p.acceptKw("ALTER"):
		p.acceptKw("COLUMN")
		parent, col := p.columnPath()
		if len(parent) > 0 && !p.isKw("TYPE") && !(p.isKw("SET") && p.peek(1).isKw("DATA")) {
			p.failMsg("only the type of a struct's field can be altered (ALTER COLUMN s.a TYPE …)")
		}
		switch {
		case p.acceptKw("TYPE"):
			return &AlterColumnType{Pos: pos, Parent: parent, Column: col, Type: p.typeName()}
		case p.acceptKw("SET"):
			if p.acceptKw("DEFAULT") {
				return &AlterColumnDefault{Pos: pos, Column: col, Default: p.expr(0)}
			}
			if p.acceptKw("DATA") {
				p.expectKw("TYPE")
				return &AlterColumnType{Pos: pos, Parent: parent, Column: col, Type: p.typeName()}
			}
			p.expectKw("NOT")
			p.expectKw("NULL")
			return &AlterColumnNotNull{Pos: pos, Column: col, Set: true}
		case p.acceptKw("DROP"):
			if p.acceptKw("DEFAULT") {
				return &AlterColumnDefault{Pos: pos, Column: col}
			}
			p.expectKw("NOT")
			p.expectKw("NULL")
			return &AlterColumnNotNull{Pos: pos, Column: col}
		}
		p.fail()
	case p.acceptKw("SET"):
		switch {
		case p.acceptKwQuiet("TBLPROPERTIES"): // Spark
		case p.acceptKwQuiet("PROPERTIES"): // Trino: no parentheses
			var list []*Property
			for {
				list = append(list, p.property())
				if !p.acceptOp(",") {
					return &SetProperties{Pos: pos, Properties: list}
				}
			}
		}
		return &SetProperties{Pos: pos, Properties: p.properties()}
	case p.acceptKwQuiet("UNSET"):
		if !p.acceptKwQuiet("TBLPROPERTIES") {
			p.note("TBLPROPERTIES")
			p.fail()
		}
		u := &UnsetProperties{Pos: pos, IfExists: p.ifExists()}
		p.expectOp("(")
		for {
			if p.tok.kind != tString || p.tok.val == "" {
				p.note("property name")
				p.fail()
			}
			u.Keys = append(u.Keys, p.tok.val)
			p.next()
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return u
	}
	p.note("RENAME")
	p.note("EXECUTE")
	p.fail()
	return nil
}

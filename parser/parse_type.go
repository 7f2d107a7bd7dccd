package parser

import (
	"strconv"
	"strings"
)

// typeName parses a type: a (possibly multi-word) name, optional
// parameters, STRUCT/MAP/LIST bodies, and trailing [] dimensions.
func (p *parser) typeName() *TypeName {
	p.enter()
	defer p.leave()
	t := &TypeName{Pos: p.tok.pos()}
	if p.tok.kind == tWord && strings.EqualFold(p.tok.val, "pg_catalog") && p.peek(1).isOp(".") {
		// pg_catalog.text, pg_catalog.regclass: PostgreSQL's built-in
		// schema, which clients write out
		p.next()
		p.next()
	}
	switch p.tok.kind {
	case tQIdent:
		t.Name = p.tok.val
		p.next()
	case tWord:
		word := upper(p.tok.val)
		p.next()
		t.Name = word
		if c, ok := typeAliases[word]; ok {
			t.Name = c
		}
		switch word {
		case "DOUBLE":
			p.acceptKw("PRECISION")
		case "CHARACTER", "CHAR":
			if p.acceptKw("VARYING") {
				t.Name = "VARCHAR"
			}
		case "TIMESTAMP", "TIME":
			if p.isKw("WITH") && p.peek(1).isKw("TIME") {
				p.next()
				p.next()
				p.expectKw("ZONE")
				t.Name += "TZ"
			} else if p.isKw("WITHOUT") {
				p.next()
				p.expectKw("TIME")
				p.expectKw("ZONE")
			}
		}
	default:
		p.note("type name")
		p.fail()
	}
	switch t.Name {
	case "STRUCT", "ROW":
		t.Name = "STRUCT"
		p.expectOp("(")
		for {
			f := &FieldDef{Pos: p.tok.pos(), Name: p.label("field name")}
			f.Type = p.typeName()
			t.Fields = append(t.Fields, f)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	case "MAP", "LIST":
		if p.isOp("(") {
			p.next()
			t.Elem = append(t.Elem, p.typeName())
			for p.acceptOp(",") {
				t.Elem = append(t.Elem, p.typeName())
			}
			p.expectOp(")")
		}
	default:
		if p.isOp("(") {
			p.next()
			for {
				if p.tok.kind != tInteger {
					p.note("integer")
					p.fail()
				}
				n, err := strconv.Atoi(p.tok.val)
				if err != nil || n > 1<<20 {
					p.failMsg("type parameter out of range")
				}
				t.Params = append(t.Params, n)
				p.next()
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
		}
	}
	for p.isOp("[") && p.peek(1).isOp("]") {
		p.next()
		p.next()
		t.ArrayDims++
	}
	return t
}

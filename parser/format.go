package parser

import (
	"strconv"
	"strings"
)

// writer accumulates canonical SQL. Every node's format method writes
// itself; String() methods wrap it.
type writer struct {
	strings.Builder
}

func str(n Node) string {
	var w writer
	n.format(&w)
	return w.String()
}

func (w *writer) s(parts ...string) {
	for _, p := range parts {
		w.WriteString(p)
	}
}

// ident writes an identifier: quoted if it was quoted, as written otherwise
// (a bare identifier was lexed as a word, so it reads back as one).
func (w *writer) ident(id Ident) {
	if id.Quoted {
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(id.Name, `"`, `""`))
		w.WriteByte('"')
		return
	}
	w.WriteString(id.Name)
}

func (w *writer) name(n Name) {
	for i, id := range n {
		if i > 0 {
			w.WriteByte('.')
		}
		w.ident(id)
	}
}

func (w *writer) idents(list []Ident) {
	for i, id := range list {
		if i > 0 {
			w.WriteString(", ")
		}
		w.ident(id)
	}
}

// stringLit writes a string literal. Values with control characters are
// written as E'…' so the output stays on one line and reads back exactly.
func (w *writer) stringLit(v string) {
	needE := false
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			needE = true
			break
		}
	}
	if !needE {
		w.WriteByte('\'')
		w.WriteString(strings.ReplaceAll(v, "'", "''"))
		w.WriteByte('\'')
		return
	}
	w.WriteString("E'")
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			w.WriteString(`\\`)
		case '\'':
			w.WriteString(`''`)
		case '\n':
			w.WriteString(`\n`)
		case '\t':
			w.WriteString(`\t`)
		case '\r':
			w.WriteString(`\r`)
		default:
			if c < 0x20 || c == 0x7f {
				w.WriteString(`\x`)
				w.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
				w.WriteString(strconv.FormatUint(uint64(c)&15, 16))
			} else {
				w.WriteByte(c)
			}
		}
	}
	w.WriteByte('\'')
}

// propertyKey writes a property key bare when it is a plain lower-case
// identifier and as a quoted identifier otherwise.
func (w *writer) propertyKey(k string) {
	plain := k != "" && !isReserved(k) && (k[0] >= 'a' && k[0] <= 'z' || k[0] == '_')
	for i := 0; plain && i < len(k); i++ {
		c := k[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain {
		w.WriteString(k)
		return
	}
	w.ident(Ident{Name: k, Quoted: true})
}

func (w *writer) typeName(t *TypeName) {
	plain := t.Name != ""
	for i := 0; plain && i < len(t.Name); i++ {
		c := t.Name[i]
		plain = c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9'
	}
	if plain && !isReserved(t.Name) {
		w.WriteString(t.Name)
	} else {
		w.ident(Ident{Name: t.Name, Quoted: true})
	}
	switch {
	case t.Fields != nil:
		w.WriteByte('(')
		for i, f := range t.Fields {
			if i > 0 {
				w.WriteString(", ")
			}
			w.ident(f.Name)
			w.WriteByte(' ')
			w.typeName(f.Type)
		}
		w.WriteByte(')')
	case t.Elem != nil:
		w.WriteByte('(')
		for i, e := range t.Elem {
			if i > 0 {
				w.WriteString(", ")
			}
			w.typeName(e)
		}
		w.WriteByte(')')
	case t.Params != nil:
		w.WriteByte('(')
		for i, n := range t.Params {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.Itoa(n))
		}
		w.WriteByte(')')
	}
	for i := 0; i < t.ArrayDims; i++ {
		w.WriteString("[]")
	}
}

func (t *TypeName) format(w *writer) { w.typeName(t) }

// String renders the type canonically.
func (t *TypeName) String() string { return str(t) }

// QuoteIdent renders name as an identifier that reads back as name: bare
// when it is a plain lower-case word that is not reserved, else quoted.
func QuoteIdent(name string) string {
	plain := name != "" && !isReserved(name)
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

package parser

import "strings"

// Pos is a position in the source text. Line and Column are 1-based; Column
// counts characters (runes), not bytes. Offset is the 0-based byte offset.
type Pos struct {
	Line   int
	Column int
	Offset int
}

// Position returns p itself; nodes embed Pos, which makes every node satisfy
// the Position part of Node.
func (p Pos) Position() Pos { return p }

// Node is any AST node.
type Node interface {
	Position() Pos
	// String renders the node as canonical SQL that parses back to an equal node.
	String() string
	format(w *writer)
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a top-level statement.
type Stmt interface {
	Node
	stmtNode()
}

// TableExpr is an item of a FROM clause (or a MERGE source).
type TableExpr interface {
	Node
	tableNode()
}

// Ident is one identifier. Name is the text as written (for a quoted
// identifier: without the quotes, with "" collapsed). Quoted records whether
// the user delimited it, which is what a case-insensitive binder needs to know.
type Ident struct {
	Pos
	Name   string
	Quoted bool
}

// Empty reports whether the identifier is absent (an optional alias not given).
func (id Ident) Empty() bool { return id.Name == "" && !id.Quoted }

// String renders the identifier, quoting it when it was quoted or could not
// be read back bare.
func (id Ident) String() string {
	var w writer
	w.ident(id)
	return w.String()
}

// Name is a dotted name such as skade.main.events: its parts in order.
type Name []Ident

// String renders the dotted name.
func (n Name) String() string {
	var w writer
	w.name(n)
	return w.String()
}

// Last returns the final part (the table name of catalog.schema.table), or
// the empty Ident for an empty Name.
func (n Name) Last() Ident {
	if len(n) == 0 {
		return Ident{}
	}
	return n[len(n)-1]
}

// MetadataTable splits an Iceberg-style metadata table reference such as
// "events$snapshots" into the base table name and the suffix ("snapshots").
// ok is false when the last part has no '$' suffix.
func (n Name) MetadataTable() (base Name, suffix string, ok bool) {
	last := n.Last()
	i := strings.LastIndexByte(last.Name, '$')
	if i <= 0 || i == len(last.Name)-1 {
		return n, "", false
	}
	base = append(Name(nil), n...)
	base[len(base)-1].Name = last.Name[:i]
	return base, last.Name[i+1:], true
}

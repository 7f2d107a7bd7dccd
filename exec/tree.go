package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Generic tree access for the optimizer, which rewrites expressions
// (renumbering columns after pushdown, folding constants) without knowing
// every node kind exec defines.

// Children returns e's direct sub-expressions, in a fixed order that
// WithChildren accepts back. Leaves (Column, Literal) have none.
func Children(e Expr) []Expr {
	switch x := e.(type) {
	case *Call:
		return append([]Expr(nil), x.Args...)
	case *Cast:
		return []Expr{x.Arg}
	case *Case:
		out := make([]Expr, 0, 2*len(x.Whens)+1)
		for _, w := range x.Whens {
			out = append(out, w.Cond, w.Then)
		}
		if x.Else != nil {
			out = append(out, x.Else)
		}
		return out
	case *Coalesce:
		return append([]Expr(nil), x.Args...)
	case *inList:
		return append([]Expr{x.arg}, x.list...)
	case *SingleRow:
		return []Expr{x.Count, x.Value}
	}
	return nil
}

// WithChildren returns a copy of e whose direct sub-expressions are ch.
// Each replacement must have the type of the child it replaces, so the
// node's kernels stay valid; a type change needs a fresh NewCall.
func WithChildren(e Expr, ch []Expr) (Expr, error) {
	old := Children(e)
	if len(ch) != len(old) {
		return nil, fmt.Errorf("exec: %s has %d children, got %d (planner bug)", e, len(old), len(ch))
	}
	for i := range ch {
		if !arrow.TypeEqual(ch[i].DataType(), old[i].DataType()) {
			return nil, fmt.Errorf("exec: child %d of %s changes type from %s to %s (planner bug)",
				i, e, TypeName(old[i].DataType()), TypeName(ch[i].DataType()))
		}
	}
	switch x := e.(type) {
	case *Call:
		c := *x
		c.Args = append([]Expr(nil), ch...)
		return &c, nil
	case *Cast:
		c := *x
		c.Arg = ch[0]
		return &c, nil
	case *Case:
		c := *x
		c.Whens = make([]When, len(x.Whens))
		for i := range c.Whens {
			c.Whens[i] = When{Cond: ch[2*i], Then: ch[2*i+1]}
		}
		if x.Else != nil {
			c.Else = ch[len(ch)-1]
		}
		return &c, nil
	case *Coalesce:
		c := *x
		c.Args = append([]Expr(nil), ch...)
		return &c, nil
	case *inList:
		c := *x
		c.arg, c.list = ch[0], append([]Expr(nil), ch[1:]...)
		return &c, nil
	case *SingleRow:
		return &SingleRow{Count: ch[0], Value: ch[1]}, nil
	}
	return e, nil
}

// Transform rewrites e bottom-up: children first, then f on the node
// rebuilt with the new children. f returns its argument to keep a node.
func Transform(e Expr, f func(Expr) (Expr, error)) (Expr, error) {
	ch := Children(e)
	if len(ch) > 0 {
		changed := false
		for i, c := range ch {
			n, err := Transform(c, f)
			if err != nil {
				return nil, err
			}
			if n != c {
				ch[i], changed = n, true
			}
		}
		if changed {
			var err error
			if e, err = WithChildren(e, ch); err != nil {
				return nil, err
			}
		}
	}
	return f(e)
}

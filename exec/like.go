package exec

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// LIKE and ILIKE with % (any run), _ (one character) and backslash escape.
// A constant pattern is compiled once, at bind time, and the common shapes
// take fast paths: 'abc' (equality), 'abc%' (prefix), '%abc' (suffix) and
// '%abc%' (contains). ILIKE lower-cases both sides (Unicode simple
// folding); everything else runs a backtracking matcher that is linear for
// patterns with a single %.

var errLikeEscape = errors.New("LIKE pattern must not end with escape character")

func init() {
	for _, op := range []string{"like", "ilike", "not_like", "not_ilike"} {
		registerOp(op, resolveLike)
	}
}

func resolveLike(op string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	cargs := make([]Expr, 2)
	for i, a := range args {
		t := a.DataType()
		if !isString(t) && !isNull(t) {
			return nil, errNoMatch
		}
		c, err := Coerce(a, tString)
		if err != nil {
			return nil, err
		}
		cargs[i] = c
	}
	fold := op == "ilike" || op == "not_ilike"
	negate := op == "not_like" || op == "not_ilike"
	var fixed *likePattern
	if v, ok := literalValue(cargs[1]); ok {
		p, err := compileLike(v.String(), fold)
		if err != nil {
			return nil, err
		}
		fixed = p
	}
	return newCall(op, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		s := newStrView(a[0])
		pv := newStrView(a[1])
		vals := newBitmap(ec.Mem, n)
		vb := vals.Bytes()
		valid := andValidity(ec.Mem, n, a[0], a[1])
		var nb []byte
		if valid != nil {
			nb = valid.Bytes()
		}
		p := fixed
		lastPat := ""
		var scratch []byte
		for i := range n {
			if !isValid(nb, i) {
				continue
			}
			if fixed == nil {
				if ps := pv.str(i); p == nil || ps != lastPat {
					var err error
					if p, err = compileLike(ps, fold); err != nil {
						releaseBufs(vals, valid)
						return nil, err
					}
					lastPat = ps
				}
			}
			in := s.at(i)
			if fold {
				scratch = foldBytes(scratch[:0], in)
				in = scratch
			}
			if p.match(in) != negate {
				bitutil.SetBit(vb, i)
			}
		}
		return makeArray(tBool, n, valid, -1, vals), nil
	}, formInfix, cargs...), nil
}

// foldBytes lower-cases b into dst, with an ASCII fast path.
func foldBytes(dst, b []byte) []byte {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return append(dst, bytes.ToLower(b)...)
		}
	}
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

type likeKind uint8

const (
	likeGeneral likeKind = iota
	likeEqual
	likePrefix
	likeSuffix
	likeContains
	likeAll // '%'
)

// likeElem is one pattern element: a literal byte, '_' or '%'.
type likeElem struct {
	b    byte
	kind uint8 // 0 literal, 1 any char, 2 any run
}

type likePattern struct {
	kind  likeKind
	lit   []byte // the literal of a fast-path pattern
	elems []likeElem
}

// compileLike parses a LIKE pattern with backslash as the escape.
func compileLike(pat string, fold bool) (*likePattern, error) {
	if fold {
		pat = string(foldBytes(nil, []byte(pat)))
	}
	p := &likePattern{}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '\\':
			if i+1 == len(pat) {
				return nil, errLikeEscape
			}
			i++
			p.elems = append(p.elems, likeElem{b: pat[i]})
		case '%':
			// collapse runs of %
			if len(p.elems) == 0 || p.elems[len(p.elems)-1].kind != 2 {
				p.elems = append(p.elems, likeElem{kind: 2})
			}
		case '_':
			p.elems = append(p.elems, likeElem{kind: 1})
		default:
			p.elems = append(p.elems, likeElem{b: c})
		}
	}
	p.classify()
	return p, nil
}

// classify picks a fast path when the pattern is a literal with % only at
// its ends.
func (p *likePattern) classify() {
	e := p.elems
	lead := len(e) > 0 && e[0].kind == 2
	trail := len(e) > 0 && e[len(e)-1].kind == 2
	inner := e
	if lead {
		inner = inner[1:]
	}
	if trail && len(inner) > 0 {
		inner = inner[:len(inner)-1]
	}
	for _, x := range inner {
		if x.kind != 0 {
			p.kind = likeGeneral
			return
		}
		p.lit = append(p.lit, x.b)
	}
	switch {
	case len(e) == 1 && lead:
		p.kind = likeAll
	case lead && trail:
		p.kind = likeContains
	case lead:
		p.kind = likeSuffix
	case trail:
		p.kind = likePrefix
	default:
		p.kind = likeEqual
	}
}

func (p *likePattern) match(s []byte) bool {
	switch p.kind {
	case likeEqual:
		return bytes.Equal(s, p.lit)
	case likePrefix:
		return bytes.HasPrefix(s, p.lit)
	case likeSuffix:
		return bytes.HasSuffix(s, p.lit)
	case likeContains:
		return bytes.Contains(s, p.lit)
	case likeAll:
		return true
	}
	return likeMatch(s, p.elems)
}

// likeMatch is the classic wildcard matcher: on a mismatch it retries
// from the last %, advancing the text by one character.
func likeMatch(s []byte, p []likeElem) bool {
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch e := p[pi]; e.kind {
			case 0:
				if s[si] == e.b {
					si++
					pi++
					continue
				}
			case 1:
				_, w := utf8.DecodeRune(s[si:])
				si += w
				pi++
				continue
			case 2:
				starP, starS = pi, si
				pi++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		_, w := utf8.DecodeRune(s[starS:])
		starS += w
		si, pi = starS, starP+1
	}
	for pi < len(p) && p[pi].kind == 2 {
		pi++
	}
	return pi == len(p)
}

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

var errLikeEscapeString = errors.New("invalid escape string; an escape string must be empty or one character")

// resolveLike binds s LIKE pattern [ESCAPE esc]. The escape, when given,
// must be a constant of at most one character; empty disables escaping.
func resolveLike(op string, args []Expr) (Expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, errNoMatch
	}
	esc := int('\\')
	if len(args) == 3 {
		v, ok := literalValue(args[2])
		if !ok || !isString(v.DataType()) {
			return nil, errLikeEscapeString
		}
		switch e := v.String(); len(e) {
		case 0:
			esc = -1
		case 1:
			esc = int(e[0])
		default:
			return nil, errLikeEscapeString
		}
		args = args[:2]
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
		p, err := compileLike(v.String(), fold, esc)
		if err != nil {
			return nil, err
		}
		fixed = p
	}
	c := newCall(op, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		s := newStrView(a[0])
		var pv strView
		var valid = andValidity(ec.Mem, n, a[0])
		if fixed == nil {
			pv = newStrView(a[1])
			if valid != nil {
				valid.Release()
			}
			valid = andValidity(ec.Mem, n, a[0], a[1])
		}
		vals := newBitmap(ec.Mem, n)
		vb := vals.Bytes()
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
					if p, err = compileLike(ps, fold, esc); err != nil {
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
	}, formInfix, cargs...)
	if fixed != nil {
		c.skipping(1)
	}
	return c, nil
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
	// the general matcher's runs between %s, split once at compile time
	segs        []likeSeg
	lead, trail bool
}

// compileLike parses a LIKE pattern; esc is the escape byte, or -1 for
// none.
func compileLike(pat string, fold bool, esc int) (*likePattern, error) {
	if fold {
		pat = string(foldBytes(nil, []byte(pat)))
	}
	p := &likePattern{}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		if int(c) == esc {
			if i+1 == len(pat) {
				return nil, errLikeEscape
			}
			i++
			p.elems = append(p.elems, likeElem{b: pat[i]})
			continue
		}
		switch c {
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
	p.segs, p.lead, p.trail = segments(p.elems)
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
	return likeMatch(s, p.segs, p.lead, p.trail)
}

// likeSeg is a run of pattern elements between two %s.
type likeSeg struct {
	elems  []likeElem
	lit    []byte // the bytes, when the run has no _
	hasAny bool
}

// segments splits the pattern at its %s and notes whether it starts or
// ends with one.
func segments(elems []likeElem) (segs []likeSeg, lead, trail bool) {
	lead = len(elems) > 0 && elems[0].kind == 2
	trail = len(elems) > 0 && elems[len(elems)-1].kind == 2
	var cur likeSeg
	flush := func() {
		if len(cur.elems) > 0 {
			segs = append(segs, cur)
		}
		cur = likeSeg{}
	}
	for _, e := range elems {
		switch e.kind {
		case 2:
			flush()
		case 1:
			cur.hasAny = true
			cur.elems = append(cur.elems, e)
		default:
			cur.elems = append(cur.elems, e)
			cur.lit = append(cur.lit, e.b)
		}
	}
	flush()
	return segs, lead, trail
}

// matchFwd matches seg at s[pos:end] and returns where the match ends.
func (seg *likeSeg) matchFwd(s []byte, pos, end int) (int, bool) {
	for _, e := range seg.elems {
		if pos >= end {
			return 0, false
		}
		if e.kind == 1 {
			_, w := utf8.DecodeRune(s[pos:end])
			pos += w
			continue
		}
		if s[pos] != e.b {
			return 0, false
		}
		pos++
	}
	return pos, true
}

// matchBwd matches seg so that it ends at end and returns where it starts.
func (seg *likeSeg) matchBwd(s []byte, start, end int) (int, bool) {
	for i := len(seg.elems) - 1; i >= 0; i-- {
		if end <= start {
			return 0, false
		}
		e := seg.elems[i]
		if e.kind == 1 {
			_, w := utf8.DecodeLastRune(s[start:end])
			end -= w
			continue
		}
		if s[end-1] != e.b {
			return 0, false
		}
		end--
	}
	return end, true
}

// likeMatch matches a general pattern. The first and last runs are
// anchored unless the pattern starts or ends with %; every middle run is
// matched at its leftmost position, which is always safe for % patterns
// (a later match only leaves less room for the runs after it). Text
// positions advance by whole characters, so _ never splits one.
func likeMatch(s []byte, segs []likeSeg, lead, trail bool) bool {
	pos, end := 0, len(s)
	if len(segs) == 0 {
		return lead || len(s) == 0 // "%" or ""
	}
	if !lead {
		e, ok := segs[0].matchFwd(s, 0, end)
		if !ok {
			return false
		}
		if len(segs) == 1 && !trail {
			return e == end
		}
		pos = e
		segs = segs[1:]
	}
	if !trail && len(segs) > 0 {
		st, ok := segs[len(segs)-1].matchBwd(s, pos, end)
		if !ok {
			return false
		}
		end = st
		segs = segs[:len(segs)-1]
	}
	for i := range segs {
		seg := &segs[i]
		if !seg.hasAny {
			j := bytes.Index(s[pos:end], seg.lit)
			if j < 0 {
				return false
			}
			pos += j + len(seg.lit)
			continue
		}
		found := false
		first := seg.elems[0]
		for p := pos; p < end; {
			if first.kind == 0 {
				// skip to the next place the run's first byte occurs
				j := bytes.IndexByte(s[p:end], first.b)
				if j < 0 {
					break
				}
				p += j
			}
			if e, ok := seg.matchFwd(s, p, end); ok {
				pos, found = e, true
				break
			}
			_, w := utf8.DecodeRune(s[p:end])
			p += w
		}
		if !found {
			return false
		}
	}
	return true
}

package exec

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// String functions with Postgres semantics: positions and lengths count
// characters (UTF-8 code points), not bytes; substring is 1-based; ||
// yields NULL when either side is NULL while concat skips NULLs.

func init() {
	register("lower", strUnary(func(d []byte, s []byte) []byte { return appendLower(d, s) }))
	register("upper", strUnary(func(d []byte, s []byte) []byte { return appendUpper(d, s) }))
	register("reverse", strUnary(appendReverse))
	for _, n := range []string{"length", "char_length", "character_length"} {
		register(n, sig(types(tString), tInt32, strToInt(func(s []byte) int32 { return int32(utf8.RuneCount(s)) })))
	}
	register("octet_length", sig(types(tString), tInt32, strToInt(func(s []byte) int32 { return int32(len(s)) })))
	register("substring", sig(types(tString, tInt64), tString, substrKernel(false)),
		sig(types(tString, tInt64, tInt64), tString, substrKernel(true)))
	register("substr", functions["substring"]...)
	register("left", sig(types(tString, tInt64), tString, leftRight(true)))
	register("right", sig(types(tString, tInt64), tString, leftRight(false)))
	register("strpos", sig(types(tString, tString), tInt32, strposKernel))
	register("position", sig(types(tString, tString), tInt32, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		// position(sub IN s) arrives as position(sub, s)
		return strposKernel(ec, []arrow.Array{a[1], a[0]}, n)
	}))
	register("starts_with", sig(types(tString, tString), tBool, strPred(bytes.HasPrefix)))
	register("ends_with", sig(types(tString, tString), tBool, strPred(bytes.HasSuffix)))
	register("contains", sig(types(tString, tString), tBool, strPred(bytes.Contains)))
	register("replace", sig(types(tString, tString, tString), tString, strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
		if len(a[1]) == 0 {
			return append(d, a[0]...), nil
		}
		return append(d, bytes.ReplaceAll(a[0], a[1], a[2])...), nil
	})))
	register("split_part", sig(types(tString, tString, tInt64), tString, strRowsKernel(splitPart)))
	register("translate", sig(types(tString, tString, tString), tString, strRowsKernel(translateChars)))
	register("repeat", sig(types(tString, tInt64), tString, strRowsKernel(func(d []byte, a [][]byte, x []int64) ([]byte, error) {
		if x[0] > 0 && int64(len(a[0]))*x[0] > 1<<28 {
			return nil, errors.New("requested length too large")
		}
		for range x[0] {
			d = append(d, a[0]...)
		}
		return d, nil
	})))
	for _, name := range []string{"trim", "btrim", "ltrim", "rtrim"} {
		left, right := name != "rtrim", name != "ltrim"
		register(name,
			sig(types(tString), tString, strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
				return append(d, trimChars(a[0], " ", left, right)...), nil
			})),
			sig(types(tString, tString), tString, strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
				return append(d, trimChars(a[0], string(a[1]), left, right)...), nil
			})))
	}
	register("lpad", padOverloads(true)...)
	register("rpad", padOverloads(false)...)
	register("concat", resolveConcat)
	register("concat_ws", resolveConcatWS)
	register("md5", strUnary(func(d, s []byte) []byte {
		sum := md5.Sum(s)
		return hex.AppendEncode(d, sum[:])
	}))
	register("initcap", strUnary(appendInitcap))
	registerOp("||", resolveConcatOp)
	register("regexp_matches", resolveRegexp)
	register("regexp_like", resolveRegexp)
	register("regexp_replace", sig(types(tString, tString, tString), tString, regexpReplace),
		sig(types(tString, tString, tString, tString), tString, regexpReplace))
	// Postgres's regular-expression match operators
	registerOp("~", regexOp(false, false))
	registerOp("~*", regexOp(true, false))
	registerOp("!~", regexOp(false, true))
	registerOp("!~*", regexOp(true, true))
}

// translateChars is translate(s, from, to): each character of s found in
// from becomes the character at the same place in to, or is dropped when
// to is shorter; the first occurrence in from counts, as in PostgreSQL.
func translateChars(d []byte, a [][]byte, _ []int64) ([]byte, error) {
	from, to := []rune(string(a[1])), []rune(string(a[2]))
	for _, r := range string(a[0]) {
		k := slices.Index(from, r)
		switch {
		case k < 0:
			d = utf8.AppendRune(d, r)
		case k < len(to):
			d = utf8.AppendRune(d, to[k])
		}
	}
	return d, nil
}

// compileRegexp compiles a PostgreSQL pattern with its flags (i, s, m;
// c and g are accepted and change nothing here).
func compileRegexp(pat, flags string) (*regexp.Regexp, error) {
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i', 's', 'm':
			prefix += string(f)
		case 'c', 'g':
		default:
			return nil, fmt.Errorf("invalid regular expression option: %q", string(f))
		}
	}
	if prefix != "" {
		pat = "(?" + prefix + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// regexpReplace is regexp_replace(s, pattern, replacement [, flags]):
// the first match replaced, or every match with the flag g. In the
// replacement \1 … \9 stand for the pattern's groups, \& for the whole
// match and \\ for a backslash, as in PostgreSQL.
func regexpReplace(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
	var re *regexp.Regexp
	var global bool
	var pat, flags, repl string
	var tmpl []byte
	return strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
		f := ""
		if len(a) == 4 {
			f = string(a[3])
		}
		if re == nil || string(a[1]) != pat || f != flags {
			r, err := compileRegexp(string(a[1]), f)
			if err != nil {
				return nil, err
			}
			re, pat, flags, global = r, string(a[1]), f, strings.ContainsRune(f, 'g')
		}
		if tmpl == nil || string(a[2]) != repl {
			repl, tmpl = string(a[2]), replacementTemplate(a[2])
		}
		src := a[0]
		if global {
			return append(d, re.ReplaceAll(src, tmpl)...), nil
		}
		loc := re.FindSubmatchIndex(src)
		if loc == nil {
			return append(d, src...), nil
		}
		d = append(d, src[:loc[0]]...)
		d = re.Expand(d, tmpl, src, loc)
		return append(d, src[loc[1]:]...), nil
	})(ec, args, n)
}

// replacementTemplate turns a PostgreSQL replacement string into a Go
// regexp template.
func replacementTemplate(r []byte) []byte {
	out := make([]byte, 0, len(r)+8)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '$':
			out = append(out, '$', '$')
		case c == '\\' && i+1 < len(r) && r[i+1] >= '1' && r[i+1] <= '9':
			out = append(out, '$', '{', r[i+1], '}')
			i++
		case c == '\\' && i+1 < len(r) && r[i+1] == '&':
			out = append(out, "${0}"...)
			i++
		case c == '\\' && i+1 < len(r) && r[i+1] == '\\':
			out = append(out, '\\')
			i++
		default:
			out = append(out, c)
		}
	}
	return out
}

func regexOp(icase, negate bool) overload {
	return func(op string, args []Expr) (Expr, error) {
		if len(args) != 2 {
			return nil, errNoMatch
		}
		a := args
		if icase {
			a = []Expr{args[0], args[1], &Literal{Value: scalar.NewStringScalar("i")}}
		}
		e, err := resolveRegexp(op, a)
		if err != nil {
			return nil, err
		}
		c := e.(*Call)
		c.form = formInfix // String shows Args[0] and Args[1] only
		if !negate {
			return c, nil
		}
		inner := c.fn
		c.fn = func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
			m, err := inner(ec, args, n)
			if err != nil {
				return nil, err
			}
			defer m.Release()
			return notKernel(ec, []arrow.Array{m}, n)
		}
		return c, nil
	}
}

// strRowsKernel runs f on every row where all arguments are valid. String
// arguments arrive in a (as byte slices into the input), integer arguments
// in x, in their order of appearance.
func strRowsKernel(f func(dst []byte, a [][]byte, x []int64) ([]byte, error)) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		var strs []strView
		var ints [][]int64
		for _, a := range args {
			if isString(a.DataType()) {
				strs = append(strs, newStrView(a))
			} else {
				ints = append(ints, values[int64](a))
			}
		}
		valid := andValidity(ec.Mem, n, args...)
		if valid != nil {
			defer valid.Release()
		}
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		bld := newStringBuilder(ec.Mem, tString, n, strs[0].bytesLen())
		defer bld.Release()
		sa := make([][]byte, len(strs))
		xa := make([]int64, len(ints))
		var scratch []byte
		for i := range n {
			if !isValid(vb, i) {
				bld.AppendNull()
				continue
			}
			for k := range strs {
				sa[k] = strs[k].at(i)
			}
			for k := range ints {
				xa[k] = ints[k][i]
			}
			var err error
			if scratch, err = f(scratch[:0], sa, xa); err != nil {
				return nil, err
			}
			bld.Append(scratch)
		}
		return bld.NewArray(), nil
	}
}

// strUnary is a text -> text function.
func strUnary(f func(dst, s []byte) []byte) overload {
	return sig(types(tString), tString, strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
		return f(d, a[0]), nil
	}))
}

func isASCII(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func appendLower(d, s []byte) []byte {
	if !isASCII(s) {
		return append(d, bytes.ToLower(s)...)
	}
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		d = append(d, c)
	}
	return d
}

func appendUpper(d, s []byte) []byte {
	if !isASCII(s) {
		return append(d, bytes.ToUpper(s)...)
	}
	for _, c := range s {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		d = append(d, c)
	}
	return d
}

func appendReverse(d, s []byte) []byte {
	for len(s) > 0 {
		_, w := utf8.DecodeLastRune(s)
		d = append(d, s[len(s)-w:]...)
		s = s[:len(s)-w]
	}
	return d
}

func strToInt(f func([]byte) int32) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		v := newStrView(args[0])
		buf, out := newFixed[int32](ec.Mem, n)
		for i := range out {
			out[i] = f(v.at(i))
		}
		return makeArray(tInt32, n, andValidity(ec.Mem, n, args[0]), array.UnknownNullCount, buf), nil
	}
}

func strPred(f func(s, t []byte) bool) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := newStrView(args[0]), newStrView(args[1])
		vals := newBitmap(ec.Mem, n)
		vb := vals.Bytes()
		for i := range n {
			if f(a.at(i), b.at(i)) {
				bitutil.SetBit(vb, i)
			}
		}
		return makeArray(tBool, n, andValidity(ec.Mem, n, args...), array.UnknownNullCount, vals), nil
	}
}

// runeOffset returns the byte offset of character k (0-based) in s,
// clamped to len(s).
func runeOffset(s []byte, k int64) int {
	if k <= 0 {
		return 0
	}
	if isASCII(s) {
		return int(min(k, int64(len(s))))
	}
	off := 0
	for ; k > 0 && off < len(s); k-- {
		_, w := utf8.DecodeRune(s[off:])
		off += w
	}
	return off
}

var errNegativeSubstring = errors.New("negative substring length not allowed")

// substrKernel implements substring(s FROM start [FOR count]): characters
// start .. start+count-1, 1-based, where positions before 1 still count
// against count (substring('abc', 0, 2) is 'a'), as in Postgres.
func substrKernel(withCount bool) kernel {
	return strRowsKernel(func(d []byte, a [][]byte, x []int64) ([]byte, error) {
		s, start := a[0], x[0]
		if !withCount {
			return append(d, s[runeOffset(s, start-1):]...), nil
		}
		count := x[1]
		if count < 0 {
			return nil, errNegativeSubstring
		}
		end := start + count // exclusive, 1-based
		if start < 1 {
			start = 1
		}
		if end <= start {
			return d, nil
		}
		b := runeOffset(s, start-1)
		e := b + runeOffset(s[b:], end-start)
		return append(d, s[b:e]...), nil
	})
}

// leftRight implements left(s, n) and right(s, n); a negative n drops
// |n| characters from the other end.
func leftRight(left bool) kernel {
	return strRowsKernel(func(d []byte, a [][]byte, x []int64) ([]byte, error) {
		s, k := a[0], x[0]
		chars := int64(utf8.RuneCount(s))
		if k < 0 {
			k = max(chars+k, 0)
		}
		k = min(k, chars)
		if left {
			return append(d, s[:runeOffset(s, k)]...), nil
		}
		return append(d, s[runeOffset(s, chars-k):]...), nil
	})
}

func strposKernel(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
	a, b := newStrView(args[0]), newStrView(args[1])
	buf, out := newFixed[int32](ec.Mem, n)
	for i := range out {
		s := a.at(i)
		j := bytes.Index(s, b.at(i))
		if j < 0 {
			out[i] = 0
		} else {
			out[i] = int32(utf8.RuneCount(s[:j]) + 1)
		}
	}
	return makeArray(tInt32, n, andValidity(ec.Mem, n, args...), array.UnknownNullCount, buf), nil
}

var errFieldZero = errors.New("field position must not be zero")

// splitPart returns field x[0] of a[0] split on a[1]; negative fields
// count from the end (Postgres 14).
func splitPart(d []byte, a [][]byte, x []int64) ([]byte, error) {
	s, sep, k := a[0], a[1], x[0]
	if k == 0 {
		return nil, errFieldZero
	}
	if len(sep) == 0 {
		if k == 1 || k == -1 {
			return append(d, s...), nil
		}
		return d, nil
	}
	parts := bytes.Split(s, sep)
	if k < 0 {
		k = int64(len(parts)) + k + 1
	}
	if k < 1 || k > int64(len(parts)) {
		return d, nil
	}
	return append(d, parts[k-1]...), nil
}

func trimChars(s []byte, chars string, left, right bool) []byte {
	if left {
		s = bytes.TrimLeft(s, chars)
	}
	if right {
		s = bytes.TrimRight(s, chars)
	}
	return s
}

func padOverloads(left bool) []overload {
	pad := func(d []byte, s []byte, length int64, fill []byte) ([]byte, error) {
		if length > 1<<28 {
			return nil, errors.New("requested length too large")
		}
		chars := int64(utf8.RuneCount(s))
		if length <= chars {
			return append(d, s[:runeOffset(s, max(length, 0))]...), nil
		}
		if len(fill) == 0 {
			return append(d, s...), nil
		}
		need := length - chars
		var padding []byte
		for int64(utf8.RuneCount(padding)) < need {
			padding = append(padding, fill...)
		}
		padding = padding[:runeOffset(padding, need)]
		if left {
			return append(append(d, padding...), s...), nil
		}
		return append(append(d, s...), padding...), nil
	}
	return []overload{
		sig(types(tString, tInt64), tString, strRowsKernel(func(d []byte, a [][]byte, x []int64) ([]byte, error) {
			return pad(d, a[0], x[0], []byte(" "))
		})),
		sig(types(tString, tInt64, tString), tString, strRowsKernel(func(d []byte, a [][]byte, x []int64) ([]byte, error) {
			return pad(d, a[0], x[0], a[1])
		})),
	}
}

// toText renders any expression as text for concatenation, with the
// type's output function as Postgres does there: a boolean is 't' or 'f'
// (a cast to text says 'true').
func toText(e Expr) (Expr, error) {
	switch {
	case isString(e.DataType()):
		return e, nil
	case e.DataType().ID() == arrow.BOOL:
		return newCall("text", tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			ba := a[0].(*array.Boolean)
			bld := newStringBuilder(ec.Mem, tString, n, n)
			defer bld.Release()
			for i := range n {
				switch {
				case ba.IsNull(i):
					bld.AppendNull()
				case ba.Value(i):
					bld.Append([]byte{'t'})
				default:
					bld.Append([]byte{'f'})
				}
			}
			return bld.NewArray(), nil
		}, formFunc, e), nil
	}
	return NewCast(e, tString, false)
}

// textArgs casts every argument to text, for concat and concat_ws.
func textArgs(args []Expr) ([]Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		c, err := toText(a)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// stringInputs prepares text arrays for a row loop: a view of each, its
// validity bitmap and offset, and their total byte length (to size the
// output builder).
func stringInputs(a []arrow.Array) (views []strView, bits [][]byte, offs []int, total int) {
	views = make([]strView, len(a))
	bits = make([][]byte, len(a))
	offs = make([]int, len(a))
	for k, x := range a {
		views[k] = newStrView(x)
		bits[k], offs[k] = validBits(x)
		total += views[k].bytesLen()
	}
	return views, bits, offs, total
}

// resolveConcat implements concat(...): every argument as text, NULLs
// skipped; the result is never NULL.
func resolveConcat(name string, args []Expr) (Expr, error) {
	if len(args) == 0 {
		return nil, errNoMatch
	}
	cargs, err := textArgs(args)
	if err != nil {
		return nil, err
	}
	return newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		views, bits, offs, total := stringInputs(a)
		bld := newStringBuilder(ec.Mem, tString, n, total)
		defer bld.Release()
		var scratch []byte
		for i := range n {
			scratch = scratch[:0]
			for k := range a {
				if bits[k] == nil || bitutil.BitIsSet(bits[k], offs[k]+i) {
					scratch = append(scratch, views[k].at(i)...)
				}
			}
			bld.Append(scratch)
		}
		return bld.NewArray(), nil
	}, formFunc, cargs...), nil
}

// resolveConcatWS implements concat_ws(sep, ...): the non-NULL arguments
// joined by sep; NULL only when sep is NULL.
func resolveConcatWS(name string, args []Expr) (Expr, error) {
	if len(args) < 2 {
		return nil, errNoMatch
	}
	cargs, err := textArgs(args)
	if err != nil {
		return nil, err
	}
	return newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		views, bits, offs, total := stringInputs(a)
		bld := newStringBuilder(ec.Mem, tString, n, total)
		defer bld.Release()
		var scratch []byte
		for i := range n {
			if bits[0] != nil && !bitutil.BitIsSet(bits[0], offs[0]+i) {
				bld.AppendNull()
				continue
			}
			scratch = scratch[:0]
			first := true
			for k := 1; k < len(a); k++ {
				if bits[k] != nil && !bitutil.BitIsSet(bits[k], offs[k]+i) {
					continue
				}
				if !first {
					scratch = append(scratch, views[0].at(i)...)
				}
				first = false
				scratch = append(scratch, views[k].at(i)...)
			}
			bld.Append(scratch)
		}
		return bld.NewArray(), nil
	}, formFunc, cargs...), nil
}

// appendInitcap upper-cases the first letter of each word and lower-cases
// the rest; words are runs of letters and digits, as in Postgres.
func appendInitcap(d, s []byte) []byte {
	inWord := false
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && !inWord:
			r = unicode.ToUpper(r)
		case alnum:
			r = unicode.ToLower(r)
		}
		inWord = alnum
		d = utf8.AppendRune(d, r)
	}
	return d
}

// resolveConcatOp implements ||: text with anything (the other side is
// rendered as text), NULL if either side is NULL.
func resolveConcatOp(op string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	lt, rt := args[0].DataType(), args[1].DataType()
	if !isString(lt) && !isString(rt) && !isNull(lt) && !isNull(rt) {
		return nil, errNoMatch
	}
	l, err := toText(args[0])
	if err != nil {
		return nil, err
	}
	r, err := toText(args[1])
	if err != nil {
		return nil, err
	}
	return newCall(op, tString, strRowsKernel(func(d []byte, a [][]byte, _ []int64) ([]byte, error) {
		return append(append(d, a[0]...), a[1]...), nil
	}), formInfix, l, r), nil
}

// textOnlyArgs coerces text or untyped NULL arguments to text; any other
// type is no match (textArgs casts any type).
func textOnlyArgs(args []Expr) ([]Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		if !isString(a.DataType()) && !isNull(a.DataType()) {
			return nil, errNoMatch
		}
		c, err := Coerce(a, tString)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// resolveRegexp implements regexp_matches(s, pattern [, flags]) as a
// boolean test, as DuckDB does (Postgres's returns the matches). The
// pattern is RE2 syntax; a constant pattern is compiled once.
func resolveRegexp(name string, args []Expr) (Expr, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, errNoMatch
	}
	cargs, err := textOnlyArgs(args)
	if err != nil {
		return nil, err
	}
	compile := compileRegexp
	var fixed *regexp.Regexp
	pv, pok := literalValue(cargs[1])
	flags := ""
	fok := len(cargs) == 2
	if len(cargs) == 3 {
		var fv interface{ String() string }
		fv, fok = literalValue(cargs[2])
		if fok {
			flags = fv.String()
		}
	}
	if pok && fok {
		re, err := compile(pv.String(), flags)
		if err != nil {
			return nil, err
		}
		fixed = re
	}
	c := newCall(name, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		s := newStrView(a[0])
		var p, fl strView
		valid := andValidity(ec.Mem, n, a[0])
		if fixed == nil {
			p = newStrView(a[1])
			if len(a) == 3 {
				fl = newStrView(a[2])
			}
			if valid != nil {
				valid.Release()
			}
			valid = andValidity(ec.Mem, n, a...)
		}
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		vals := newBitmap(ec.Mem, n)
		ob := vals.Bytes()
		re := fixed
		for i := range n {
			if !isValid(vb, i) {
				continue
			}
			if fixed == nil {
				f := ""
				if len(a) == 3 {
					f = fl.str(i)
				}
				var err error
				if re, err = compile(p.str(i), f); err != nil {
					releaseBufs(vals, valid)
					return nil, err
				}
			}
			if re.Match(s.at(i)) {
				bitutil.SetBit(ob, i)
			}
		}
		return makeArray(tBool, n, valid, array.UnknownNullCount, vals), nil
	}, formFunc, cargs...)
	if fixed != nil {
		c.skipping(1, 2)
	}
	return c, nil
}

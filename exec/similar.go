package exec

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // zone names without the system database

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func init() {
	register("similar_to", resolveSimilarTo)
	register("timezone", resolveTimezone)
}

// similarToRegexp translates a SQL SIMILAR TO pattern into an anchored
// regular expression, as PostgreSQL's similar_to_escape does: % is .*, _
// is ., the escape character (backslash unless given) quotes the next
// character, the regular expression operators | * + ? {m,n} ( ) [ ] keep
// their meaning, and everything else, . ^ $ included, is literal.
func similarToRegexp(pat string, esc rune) (string, error) {
	var b strings.Builder
	b.WriteString("^(?s:")
	inClass := false
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case esc != 0 && c == esc:
			if i+1 >= len(rs) {
				return "", fmt.Errorf("invalid escape string: SIMILAR TO pattern %q ends with its escape character", pat)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inClass:
			if c == ']' {
				inClass = false
			}
			if c == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(c)
		case c == '[':
			inClass = true
			b.WriteRune(c)
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteByte('.')
		case strings.ContainsRune("|*+?{}()", c):
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}

// resolveSimilarTo is x SIMILAR TO pattern [ESCAPE e]. Each distinct
// pattern (up to 64 per call) is translated and compiled once.
func resolveSimilarTo(name string, args []Expr) (Expr, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, errNoMatch
	}
	cargs, err := textOnlyArgs(args)
	if err != nil {
		return nil, err
	}
	compile := func(pat string, escape *string) (*regexp.Regexp, error) {
		esc := '\\'
		if escape != nil {
			switch r := []rune(*escape); len(r) {
			case 0:
				esc = 0
			case 1:
				esc = r[0]
			default:
				return nil, fmt.Errorf("invalid escape string: %q; it must be empty or one character", *escape)
			}
		}
		src, err := similarToRegexp(pat, esc)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("invalid SIMILAR TO pattern %q: %s", pat, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		return re, nil
	}
	cache := map[string]*regexp.Regexp{}
	return newCall(name, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		out := newBoolOut(ec.Mem, n, true)
		s, p := newStrView(a[0]), newStrView(a[1])
		for i := 0; i < n; i++ {
			if a[0].IsNull(i) || a[1].IsNull(i) || len(a) == 3 && a[2].IsNull(i) {
				continue
			}
			var escape *string
			key := p.str(i)
			if len(a) == 3 {
				e := a[2].(*array.String).Value(i)
				escape, key = &e, key+"\x00"+e
			}
			re, ok := cache[key]
			if !ok {
				var err error
				if re, err = compile(p.str(i), escape); err != nil {
					return nil, err
				}
				if len(cache) < 64 {
					cache[key] = re
				}
			}
			out.set(i, re.Match(s.at(i)))
		}
		return out.finish(n), nil
	}, formFunc, cargs...), nil
}

// resolveTimezone is timezone(zone, t), which x AT TIME ZONE zone means:
// a timestamptz shown as the wall-clock time in zone (a timestamp), or a
// timestamp read as wall-clock time in zone (a timestamptz). zone is an
// IANA name ('Europe/Oslo'), 'UTC', or an offset ('+02:00', which
// PostgreSQL reads as POSIX: east of Greenwich is negative there, so this
// accepts only what the IANA database names).
func resolveTimezone(name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	zone, err := Coerce(args[0], tString)
	if err != nil || !isString(args[0].DataType()) && !isUnknownLiteral(args[0]) && !isNull(args[0].DataType()) {
		return nil, errNoMatch
	}
	t := args[1]
	if isUnknownLiteral(t) {
		if t, err = Coerce(t, tTimestampTZ); err != nil {
			return nil, err
		}
	}
	if t.DataType().ID() == arrow.DATE32 {
		if t, err = Coerce(t, tTimestamp); err != nil {
			return nil, err
		}
	}
	if !isTimestamp(t.DataType()) {
		return nil, errNoMatch
	}
	toLocal := isTimestampTZ(t.DataType())
	out := tTimestampTZ
	if toLocal {
		out = tTimestamp
	}
	locs := map[string]*time.Location{}
	return newCall(name, out, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		zs := newStrView(a[0])
		ts := values[arrow.Timestamp](a[1])
		b := array.NewTimestampBuilder(ec.Mem, out)
		defer b.Release()
		for i := 0; i < n; i++ {
			if a[0].IsNull(i) || a[1].IsNull(i) {
				b.AppendNull()
				continue
			}
			z := zs.str(i)
			loc, ok := locs[z]
			if !ok {
				var err error
				if loc, err = loadZone(z); err != nil {
					return nil, err
				}
				locs[z] = loc
			}
			us := int64(ts[i])
			if toLocal {
				// the instant's wall clock in zone, as a timestamp
				tm := time.UnixMicro(us).In(loc)
				_, off := tm.Zone()
				b.Append(arrow.Timestamp(us + int64(off)*1e6))
				continue
			}
			// the wall clock us in zone: the instant it names
			wall := time.UnixMicro(us).UTC()
			tm := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
			b.Append(arrow.Timestamp(tm.UnixMicro()))
		}
		return b.NewArray(), nil
	}, formFunc, zone, t), nil
}

// loadZone resolves a time zone name.
func loadZone(z string) (*time.Location, error) {
	switch strings.ToUpper(strings.TrimSpace(z)) {
	case "UTC", "GMT", "Z", "ZULU", "UCT":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(strings.TrimSpace(z))
	if err != nil {
		return nil, fmt.Errorf("time zone %q not recognized; use an IANA name such as 'Europe/Oslo' or 'UTC'", z)
	}
	return loc, nil
}

package exec

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// to_char(timestamp, format) with Postgres's template patterns: YYYY YY
// MM DD DDD D ID HH24 HH12 HH MI SS MS US AM PM am pm Month Mon MONTH MON
// month mon Day Dy DAY DY day dy Q WW IW IYYY TZ OF, the FM (fill mode)
// prefix that drops padding, and "quoted" literal text. The template is
// compiled once when it is a constant.

func init() {
	register("to_char", resolveToChar)
}

type charTok struct {
	lit  string // literal text when pat == ""
	pat  string
	fill bool // FM: no padding
}

// toCharPatterns is ordered longest first, so HH24 wins over HH.
var toCharPatterns = []string{
	"MONTH", "Month", "month", "IYYY", "YYYY", "HH24", "HH12",
	"MON", "Mon", "mon", "DAY", "Day", "day", "DDD",
	"DY", "Dy", "dy", "YY", "MM", "DD", "HH", "MI", "SS", "MS", "US",
	"AM", "PM", "am", "pm", "WW", "IW", "ID", "TZ", "OF", "D", "Q",
}

func compileToChar(f string) []charTok {
	var toks []charTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, charTok{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); {
		if f[i] == '"' {
			j := strings.IndexByte(f[i+1:], '"')
			if j < 0 {
				lit.WriteString(f[i+1:])
				break
			}
			lit.WriteString(f[i+1 : i+1+j])
			i += j + 2
			continue
		}
		fill := false
		rest := f[i:]
		if strings.HasPrefix(rest, "FM") || strings.HasPrefix(rest, "fm") {
			fill, rest = true, rest[2:]
		}
		matched := ""
		for _, p := range toCharPatterns {
			if strings.HasPrefix(rest, p) {
				matched = p
				break
			}
		}
		if matched == "" {
			lit.WriteByte(f[i])
			i++
			continue
		}
		flush()
		toks = append(toks, charTok{pat: matched, fill: fill})
		i += len(f[i:]) - len(rest) + len(matched)
	}
	flush()
	return toks
}

func appendToChar(b []byte, us int64, toks []charTok) []byte {
	days, tod := splitMicros(us)
	y, m, d := civilFromDays(days)
	h := tod / usPerHour
	num := func(v int64, width int, fill bool) {
		if fill {
			b = strconv.AppendInt(b, v, 10)
		} else {
			b = appendPadded(b, v, width)
		}
	}
	name := func(s string, upper, lower, fill bool, width int) {
		switch {
		case upper:
			s = strings.ToUpper(s)
		case lower:
			s = strings.ToLower(s)
		}
		b = append(b, s...)
		if !fill {
			for i := len(s); i < width; i++ {
				b = append(b, ' ')
			}
		}
	}
	for _, t := range toks {
		if t.pat == "" {
			b = append(b, t.lit...)
			continue
		}
		switch t.pat {
		case "YYYY":
			num(y, 4, t.fill)
		case "YY":
			num(floorMod(y, 100), 2, t.fill)
		case "IYYY":
			iy, _ := isoWeek(days)
			num(iy, 4, t.fill)
		case "MM":
			num(m, 2, t.fill)
		case "DD":
			num(d, 2, t.fill)
		case "DDD":
			num(days-daysFromCivil(y, 1, 1)+1, 3, t.fill)
		case "D":
			num(floorMod(days+4, 7)+1, 1, t.fill)
		case "ID":
			num(floorMod(days+3, 7)+1, 1, t.fill)
		case "HH24":
			num(h, 2, t.fill)
		case "HH12", "HH":
			h12 := h % 12
			if h12 == 0 {
				h12 = 12
			}
			num(h12, 2, t.fill)
		case "MI":
			num(tod/usPerMinute%60, 2, t.fill)
		case "SS":
			num(tod/usPerSecond%60, 2, t.fill)
		case "MS":
			num(tod%usPerSecond/1000, 3, t.fill)
		case "US":
			num(tod%usPerSecond, 6, t.fill)
		case "AM", "PM", "am", "pm":
			s := "AM"
			if h >= 12 {
				s = "PM"
			}
			if t.pat[0] >= 'a' {
				s = strings.ToLower(s)
			}
			b = append(b, s...)
		case "Month", "MONTH", "month":
			name(monthNames[m-1], t.pat == "MONTH", t.pat == "month", t.fill, 9)
		case "Mon", "MON", "mon":
			name(monthNames[m-1][:3], t.pat == "MON", t.pat == "mon", true, 0)
		case "Day", "DAY", "day":
			name(dayNames[floorMod(days+4, 7)], t.pat == "DAY", t.pat == "day", t.fill, 9)
		case "Dy", "DY", "dy":
			name(dayNames[floorMod(days+4, 7)][:3], t.pat == "DY", t.pat == "dy", true, 0)
		case "Q":
			num((m-1)/3+1, 1, t.fill)
		case "WW":
			num((days-daysFromCivil(y, 1, 1))/7+1, 2, t.fill)
		case "IW":
			_, w := isoWeek(days)
			num(w, 2, t.fill)
		case "TZ":
			b = append(b, "UTC"...)
		case "OF":
			b = append(b, "+00"...)
		}
	}
	return b
}

func resolveToChar(name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	ts, err := toTimestampArg(args[0])
	if err != nil {
		return nil, err
	}
	f, err := Coerce(args[1], tString)
	if err != nil {
		return nil, errNoMatch
	}
	var fixed []charTok
	fv, constFmt := literalValue(f)
	if constFmt {
		fixed = compileToChar(fv.String())
	}
	c := newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		tv := values[int64](a[0])
		var fmts strView
		valid := andValidity(ec.Mem, n, a[0])
		if fixed == nil {
			fmts = newStrView(a[1])
			if valid != nil {
				valid.Release()
			}
			valid = andValidity(ec.Mem, n, a...)
		}
		if valid != nil {
			defer valid.Release()
		}
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		bld := newStringBuilder(ec.Mem, tString, n, n*16)
		defer bld.Release()
		var scratch []byte
		for i := range n {
			if vb != nil && !bitutil.BitIsSet(vb, i) {
				bld.AppendNull()
				continue
			}
			toks := fixed
			if toks == nil {
				toks = compileToChar(fmts.str(i))
			}
			scratch = appendToChar(scratch[:0], tv[i], toks)
			bld.Append(scratch)
		}
		return bld.NewArray(), nil
	}, formFunc, ts, f)
	if constFmt {
		c.skipping(1)
	}
	return c, nil
}

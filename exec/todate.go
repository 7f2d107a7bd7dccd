package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// to_date(text, format) and to_timestamp(text, format) read a string by
// PostgreSQL's template patterns (the ones to_char writes, tokenized by
// compileToChar): YYYY YY MM DD DDD HH24 HH12 HH MI SS MS US AM PM (any
// case), month names (Month Mon, any case) and day names (Day Dy, read
// and ignored). As in PostgreSQL outside FX mode, blanks before a number
// or name are skipped, a separator in the template matches one separator
// in the input (or none), any other literal character skips one input
// character, and input left after the template is ignored. A day or
// month not given is 1, a year not given 1 BC, as in PostgreSQL. to_timestamp's result is a
// timestamp with time zone read as UTC (skade's only zone).

func init() {
	register("to_date", sig(types(tString, tString), tDate, toDateKernel(false)))
	register("to_timestamp", sig(types(tString, tString), tTimestampTZ, toDateKernel(true)))
}

// dateFields are the fields a template read.
type dateFields struct {
	year, month, day, yday int64
	hour, min, sec, usec   int64
	pm, hour12, yearSet    bool
}

// parseDateTemplate reads s by toks.
func parseDateTemplate(s string, toks []charTok) (dateFields, error) {
	f := dateFields{month: 1, day: 1}
	i := 0
	wide := false
	skipBlanks := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
	}
	num := func(pat string, width int) (int64, error) {
		skipBlanks()
		neg := false
		if pat == "YYYY" && i < len(s) && s[i] == '-' {
			neg, i = true, i+1
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && (i-start < width || pat == "YYYY" && wide) {
			i++
		}
		if i == start {
			rest := s[start:]
			if len(rest) > width {
				rest = rest[:width]
			}
			return 0, fmt.Errorf("invalid value %q for %q", rest, pat)
		}
		var v int64
		for _, c := range s[start:i] {
			v = v*10 + int64(c-'0')
			if v > 1e9 {
				return 0, fmt.Errorf("value for %q in source string is out of range", pat)
			}
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	name := func(pat string, names []string, abbrev bool) (int, error) {
		skipBlanks()
		rest := strings.ToLower(s[i:])
		for k, n := range names {
			n = strings.ToLower(n)
			if abbrev {
				n = n[:3]
			}
			if strings.HasPrefix(rest, n) {
				i += len(n)
				return k, nil
			}
		}
		w := min(len(s)-i, 9)
		return 0, fmt.Errorf("invalid value %q for %q", s[i:i+w], pat)
	}
	for ti, t := range toks {
		// a year followed at once by another field has 4 digits
		wide = ti+1 == len(toks) || toks[ti+1].pat == ""
		if t.pat == "" {
			for _, c := range []byte(t.lit) {
				switch {
				case c == ' ':
					skipBlanks()
				case isDateSeparator(c):
					skipBlanks()
					if i < len(s) && isDateSeparator(s[i]) {
						i++
					}
				default:
					if i < len(s) {
						i++
					}
				}
			}
			continue
		}
		var err error
		switch t.pat {
		case "YYYY":
			f.year, err = num(t.pat, 4)
			f.yearSet = true
		case "YY":
			f.yearSet = true
			var v int64
			if v, err = num(t.pat, 2); err == nil {
				f.year = v
				if v < 100 {
					// the year nearest 2020, as PostgreSQL adjusts it
					if v < 70 {
						f.year = 2000 + v
					} else {
						f.year = 1900 + v
					}
				}
			}
		case "MM":
			f.month, err = num(t.pat, 2)
		case "DD":
			f.day, err = num(t.pat, 2)
		case "DDD":
			f.yday, err = num(t.pat, 3)
		case "HH24":
			f.hour, err = num(t.pat, 2)
		case "HH12", "HH":
			f.hour, err = num(t.pat, 2)
			f.hour12 = true
		case "MI":
			f.min, err = num(t.pat, 2)
		case "SS":
			f.sec, err = num(t.pat, 2)
		case "MS":
			var v int64
			start := i
			if v, err = num(t.pat, 3); err == nil {
				for d := i - start; d < 3; d++ {
					v *= 10 // "12" is 120 ms
				}
				f.usec = v * 1000
			}
		case "US":
			var v int64
			start := i
			if v, err = num(t.pat, 6); err == nil {
				for d := i - start; d < 6; d++ {
					v *= 10
				}
				f.usec = v
			}
		case "AM", "PM", "am", "pm":
			skipBlanks()
			switch r := strings.ToLower(s[i:min(i+2, len(s))]); r {
			case "am", "pm":
				f.pm, i = r == "pm", i+2
			default:
				err = fmt.Errorf("invalid value %q for %q", s[i:min(i+2, len(s))], t.pat)
			}
		case "MONTH", "Month", "month", "MON", "Mon", "mon":
			var k int
			if k, err = name(t.pat, monthNames, len(t.pat) == 3); err == nil {
				f.month = int64(k + 1)
			}
		case "DAY", "Day", "day", "DY", "Dy", "dy":
			_, err = name(t.pat, dayNames, len(t.pat) == 2)
		default:
			err = fmt.Errorf("format pattern %q is not supported by to_date and to_timestamp", t.pat)
		}
		if err != nil {
			return f, err
		}
	}
	if f.hour12 {
		if f.hour < 1 || f.hour > 12 {
			return f, fmt.Errorf("hour \"%d\" is invalid for the 12-hour clock", f.hour)
		}
		f.hour %= 12
		if f.pm {
			f.hour += 12
		}
	} else if f.pm && f.hour < 12 {
		f.hour += 12
	}
	return f, nil
}

func isDateSeparator(c byte) bool {
	return !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// days is the fields' date as days since 1970-01-01.
func (f dateFields) days(s string) (int64, error) {
	// a field read as 0 counts as not given, as in PostgreSQL: day and
	// month 1, and without a year 1 BC (astronomical year 0)
	if f.month == 0 {
		f.month = 1
	}
	if f.day == 0 {
		f.day = 1
	}
	y := f.year
	if f.yearSet && y != 0 {
		if y < 0 {
			y++ // year -1 is 1 BC, astronomical year 0
		}
	} else if f.yday != 0 && !f.yearSet {
		return 0, fmt.Errorf("cannot calculate day of year without year information")
	}
	if y > 5874897 || y < -4713 {
		return 0, fmt.Errorf("date out of range: %q", s)
	}
	if f.yday != 0 {
		leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
		if f.yday < 1 || f.yday > 365 || leap && f.yday > 366 {
			return 0, fmt.Errorf("date/time field value out of range: %q", s)
		}
		return daysFromCivil(y, 1, 1) + f.yday - 1, nil
	}
	if f.month < 1 || f.month > 12 || f.day < 1 || f.day > daysInMonth(y, f.month) {
		return 0, fmt.Errorf("date/time field value out of range: %q", s)
	}
	return daysFromCivil(y, f.month, f.day), nil
}

func toDateKernel(timestamp bool) kernel {
	return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		strs, fmts := newStrView(a[0]), newStrView(a[1])
		valid := andValidity(ec.Mem, n, a...)
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		var toks []charTok
		last := ""
		dates := make([]int64, n)
		for i := range n {
			if !isValid(vb, i) {
				continue
			}
			if f := fmts.str(i); toks == nil || f != last {
				toks, last = compileToChar(f), f
			}
			s := strs.str(i)
			fields, err := parseDateTemplate(s, toks)
			if err != nil {
				releaseBufs(valid)
				return nil, err
			}
			d, err := fields.days(s)
			if err != nil {
				releaseBufs(valid)
				return nil, err
			}
			if !timestamp {
				dates[i] = d
				continue
			}
			if fields.hour > 24 || fields.min > 59 || fields.sec > 60 {
				releaseBufs(valid)
				return nil, fmt.Errorf("date/time field value out of range: %q", s)
			}
			dates[i] = d*86_400_000_000 + ((fields.hour*60+fields.min)*60+fields.sec)*1_000_000 + fields.usec
		}
		if !timestamp {
			buf, out := newFixed[arrow.Date32](ec.Mem, n)
			for i, d := range dates {
				out[i] = arrow.Date32(d)
			}
			return makeArray(tDate, n, valid, array.UnknownNullCount, buf), nil
		}
		buf, out := newFixed[arrow.Timestamp](ec.Mem, n)
		for i, d := range dates {
			out[i] = arrow.Timestamp(d)
		}
		return makeArray(tTimestampTZ, n, valid, array.UnknownNullCount, buf), nil
	}
}

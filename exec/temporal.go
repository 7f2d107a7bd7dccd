package exec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Date and time functions and arithmetic. The session time zone is UTC,
// so timestamptz computes like timestamp and prints with "+00".

func init() {
	register("now", nowFn)
	register("current_timestamp", nowFn)
	register("current_date", func(name string, args []Expr) (Expr, error) {
		if len(args) != 0 {
			return nil, errNoMatch
		}
		return newCall(name, tDate, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
			days := floorDiv(ec.Now.UnixMicro(), usPerDay)
			return constFixed(ec, tDate, arrow.Date32(days), n), nil
		}, formFunc), nil
	})
	register("today", functions["current_date"]...)
	// the session time zone is UTC, so local time is UTC time
	register("localtimestamp", func(name string, args []Expr) (Expr, error) {
		if len(args) != 0 {
			return nil, errNoMatch
		}
		return newCall(name, tTimestamp, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
			return constFixed(ec, tTimestamp, arrow.Timestamp(ec.Now.UnixMicro()), n), nil
		}, formFunc), nil
	})
	timeNow := func(name string, args []Expr) (Expr, error) {
		if len(args) != 0 {
			return nil, errNoMatch
		}
		return newCall(name, tTime, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
			_, tod := splitMicros(ec.Now.UnixMicro())
			return constFixed(ec, tTime, arrow.Time64(tod), n), nil
		}, formFunc), nil
	}
	register("current_time", timeNow)
	register("localtime", timeNow)
	register("date_trunc", resolveDateTrunc)
	register("extract", resolveExtract)
	register("date_part", resolveExtract)
	register("epoch", func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 {
			return nil, errNoMatch
		}
		a, err := toTimestampArg(args[0])
		if err != nil {
			return nil, err
		}
		return newCall(name, tFloat64, mapKernel(tFloat64, func(t arrow.Timestamp) float64 {
			return float64(t) / 1e6
		}), formFunc, a), nil
	})
	register("epoch_ms", func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 {
			return nil, errNoMatch
		}
		a, err := toTimestampArg(args[0])
		if err != nil {
			return nil, err
		}
		return newCall(name, tInt64, mapKernel(tInt64, func(t arrow.Timestamp) int64 {
			return floorDiv(int64(t), 1000)
		}), formFunc, a), nil
	})
	register("to_timestamp", sig(types(tFloat64), tTimestampTZ, mapKernelErr(tTimestampTZ, func(f float64) (arrow.Timestamp, error) {
		if math.IsNaN(f) || math.Abs(f) > 9.2e12 {
			return 0, fmt.Errorf("timestamp out of range: %q", strconv.FormatFloat(f, 'g', -1, 64))
		}
		return arrow.Timestamp(math.Round(f * 1e6)), nil
	})))
	register("make_date", sig(types(tInt32, tInt32, tInt32), tDate, makeDateKernel))
	register("make_timestamp", sig(types(tInt32, tInt32, tInt32, tInt32, tInt32, tFloat64), tTimestamp, makeTimestampKernel))
	register("strftime", resolveStrftime)
	register("date_diff", resolveDateDiff)
	register("datediff", resolveDateDiff)
	register("age", resolveAge)
}

// resolveDateDiff implements DuckDB's date_diff(part, start, end): the
// number of part boundaries crossed from start to end, as bigint.
func resolveDateDiff(name string, args []Expr) (Expr, error) {
	if len(args) != 3 || !isString(args[0].DataType()) {
		return nil, errNoMatch
	}
	pv, ok := literalValue(args[0])
	if !ok {
		return nil, fmt.Errorf("%s: the part must be a constant string such as 'day'", name)
	}
	a, err := toTimestampArg(args[1])
	if err != nil {
		return nil, err
	}
	b, err := toTimestampArg(args[2])
	if err != nil {
		return nil, err
	}
	if isTimestampTZ(a.DataType()) != isTimestampTZ(b.DataType()) {
		if a, err = Coerce(a, tTimestampTZ); err != nil {
			return nil, err
		}
		if b, err = Coerce(b, tTimestampTZ); err != nil {
			return nil, err
		}
	}
	part := strings.ToLower(strings.TrimSpace(pv.String()))
	var f func(x, y int64) int64
	step := func(unit int64) func(x, y int64) int64 {
		return func(x, y int64) int64 { return floorDiv(y, unit) - floorDiv(x, unit) }
	}
	months := func(us int64) int64 {
		d, _ := splitMicros(us)
		yy, mm, _ := civilFromDays(d)
		return yy*12 + mm - 1
	}
	switch strings.TrimSuffix(part, "s") {
	case "microsecond", "u":
		f = step(1)
	case "millisecond", "m":
		f = step(1000)
	case "second":
		f = step(usPerSecond)
	case "minute":
		f = step(usPerMinute)
	case "hour":
		f = step(usPerHour)
	case "day":
		f = step(usPerDay)
	case "week":
		wk := truncFunc("week")
		f = func(x, y int64) int64 { return (wk(y) - wk(x)) / (7 * usPerDay) }
	case "month":
		f = func(x, y int64) int64 { return months(y) - months(x) }
	case "quarter":
		f = func(x, y int64) int64 { return floorDiv(months(y), 3) - floorDiv(months(x), 3) }
	case "year":
		f = func(x, y int64) int64 { return floorDiv(months(y), 12) - floorDiv(months(x), 12) }
	default:
		return nil, fmt.Errorf("unit %q not recognized for %s", part, name)
	}
	return newCall(name, tInt64, func(ec *EvalContext, in []arrow.Array, n int) (arrow.Array, error) {
		return mapKernel2(tInt64, func(x, y arrow.Timestamp) int64 { return f(int64(x), int64(y)) })(ec, in[1:], n)
	}, formFunc, args[0], a, b).skipping(0), nil
}

// resolveAge implements Postgres's age(a, b): a - b as years, months and
// days, borrowing a month's length from b's month, and age(a) = age of a
// at midnight of the current date.
func resolveAge(name string, args []Expr) (Expr, error) {
	if len(args) != 1 && len(args) != 2 {
		return nil, errNoMatch
	}
	cargs := make([]Expr, len(args))
	for i, a := range args {
		c, err := toTimestampArg(a)
		if err != nil {
			return nil, err
		}
		if c, err = Coerce(c, tTimestamp); err != nil {
			if c, err = NewCast(c, tTimestamp, false); err != nil {
				return nil, err
			}
		}
		cargs[i] = c
	}
	return newCall(name, tInterval, func(ec *EvalContext, in []arrow.Array, n int) (arrow.Array, error) {
		if len(in) == 1 {
			today := floorDiv(ec.Now.UnixMicro(), usPerDay) * usPerDay
			return mapKernel(tInterval, func(b arrow.Timestamp) arrow.MonthDayNanoInterval {
				return ageOf(today, int64(b))
			})(ec, in, n)
		}
		return mapKernel2(tInterval, func(a, b arrow.Timestamp) arrow.MonthDayNanoInterval {
			return ageOf(int64(a), int64(b))
		})(ec, in, n)
	}, formFunc, cargs...), nil
}

func ageOf(a, b int64) arrow.MonthDayNanoInterval {
	if a < b {
		r := ageOf(b, a)
		return arrow.MonthDayNanoInterval{Months: -r.Months, Days: -r.Days, Nanoseconds: -r.Nanoseconds}
	}
	ad, at := splitMicros(a)
	bd, bt := splitMicros(b)
	ay, am, aday := civilFromDays(ad)
	by, bm, bday := civilFromDays(bd)
	tod := at - bt
	days := aday - bday
	months := am - bm
	years := ay - by
	if tod < 0 {
		tod += usPerDay
		days--
	}
	if days < 0 {
		days += daysInMonth(by, bm)
		months--
	}
	if months < 0 {
		months += 12
		years--
	}
	return arrow.MonthDayNanoInterval{Months: int32(years*12 + months), Days: int32(days), Nanoseconds: tod * 1000}
}

func nowFn(name string, args []Expr) (Expr, error) {
	if len(args) != 0 {
		return nil, errNoMatch
	}
	return newCall(name, tTimestampTZ, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
		return constFixed(ec, tTimestampTZ, arrow.Timestamp(ec.Now.UnixMicro()), n), nil
	}, formFunc), nil
}

// constFixed repeats one fixed-width value n times.
func constFixed[T arrow.FixedWidthType](ec *EvalContext, dt arrow.DataType, v T, n int) arrow.Array {
	buf, out := newFixed[T](ec.Mem, n)
	for i := range out {
		out[i] = v
	}
	return makeArray(dt, n, nil, 0, buf)
}

// toTimestampArg accepts a timestamp, timestamptz or date (widened).
func toTimestampArg(e Expr) (Expr, error) {
	t := e.DataType()
	switch {
	case isTimestamp(t):
		return e, nil
	case t.ID() == arrow.DATE32, isNull(t), isUnknownLiteral(e):
		return NewCast(e, tTimestamp, false)
	}
	return nil, errNoMatch
}

// ---- arithmetic ----------------------------------------------------------

var errDateRange = fmt.Errorf("date out of range")

// ErrTimestampOutOfRange is PostgreSQL's "timestamp out of range"
// (SQLSTATE 22008): a timestamp before 4714-11-24 BC, PostgreSQL's lower
// bound, or after the last whole day that microseconds since 1970 in an
// int64 can hold (294247-01-09; PostgreSQL, counting from 2000, reaches
// 294276). Past them values used to wrap silently.
var ErrTimestampOutOfRange = errors.New("timestamp out of range")

var (
	minTimestampMicros = daysFromCivil(-4713, 11, 24) * usPerDay
	maxTimestampDays   = int64(math.MaxInt64/usPerDay) - 1
	maxTimestampMicros = maxTimestampDays*usPerDay + usPerDay - 1
)

// checkTimestamp returns ErrTimestampOutOfRange unless us lies in
// PostgreSQL's timestamp range.
func checkTimestamp(us int64) error {
	if us < minTimestampMicros || us > maxTimestampMicros {
		return ErrTimestampOutOfRange
	}
	return nil
}

// temporalArith resolves + and - with a date, timestamp or interval
// operand.
func temporalArith(op string, l, r Expr) (Expr, error) {
	lt, rt := l.DataType(), r.DataType()
	lid, rid := lt.ID(), rt.ID()
	iv := arrow.INTERVAL_MONTH_DAY_NANO
	switch {
	case lid == arrow.DATE32 && isInteger(rt) && (op == "+" || op == "-"):
		r, err := Coerce(r, tInt32)
		if err != nil {
			return nil, errNoMatch
		}
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return newCall(op, tDate, mapKernel2Err(tDate, func(d arrow.Date32, n int32) (arrow.Date32, error) {
			v := int64(d) + sign*int64(n)
			if v != int64(int32(v)) {
				return 0, errDateRange
			}
			return arrow.Date32(v), nil
		}), formInfix, l, r), nil
	case isInteger(lt) && rid == arrow.DATE32 && op == "+":
		return temporalArith(op, r, l)
	case lid == arrow.DATE32 && rid == arrow.DATE32 && op == "-":
		return newCall(op, tInt32, mapKernel2(tInt32, func(a, b arrow.Date32) int32 { return int32(a) - int32(b) }), formInfix, l, r), nil
	case (lid == arrow.DATE32 || isTimestamp(lt)) && rid == iv && (op == "+" || op == "-"):
		out := lt
		if lid == arrow.DATE32 {
			var err error
			if l, err = NewCast(l, tTimestamp, false); err != nil {
				return nil, err
			}
			out = tTimestamp
		}
		neg := op == "-"
		return newCall(op, out, mapKernel2Err(out, func(t arrow.Timestamp, v arrow.MonthDayNanoInterval) (arrow.Timestamp, error) {
			if neg {
				v = arrow.MonthDayNanoInterval{Months: -v.Months, Days: -v.Days, Nanoseconds: -v.Nanoseconds}
			}
			us, ok := addIntervalChecked(int64(t), v)
			if !ok {
				return 0, ErrTimestampOutOfRange
			}
			return arrow.Timestamp(us), nil
		}), formInfix, l, r), nil
	case lid == iv && (rid == arrow.DATE32 || isTimestamp(rt)) && op == "+":
		e, err := temporalArith(op, r, l)
		if err != nil {
			return nil, err
		}
		c := e.(*Call)
		// keep the user's operand order for EXPLAIN; the kernel sees (t, iv)
		return newCall(op, c.typ, func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
			return c.fn(ec, []arrow.Array{args[1], args[0]}, n)
		}, formInfix, c.Args[1], c.Args[0]), nil
	case isDateLike(lt) && isDateLike(rt) && op == "-":
		t, _ := CommonType(lt, rt)
		var err error
		if l, err = Coerce(l, t); err != nil {
			return nil, err
		}
		if r, err = Coerce(r, t); err != nil {
			return nil, err
		}
		return newCall(op, tInterval, mapKernel2(tInterval, func(a, b arrow.Timestamp) arrow.MonthDayNanoInterval {
			d := int64(a) - int64(b)
			// days and time of day share a sign, as Postgres's justify_hours
			return arrow.MonthDayNanoInterval{Days: int32(d / usPerDay), Nanoseconds: d % usPerDay * 1000}
		}), formInfix, l, r), nil
	case lid == iv && isNumeric(rt) && (op == "*" || op == "/"):
		r, err := Coerce(r, tFloat64)
		if err != nil {
			return nil, err
		}
		div := op == "/"
		return newCall(op, tInterval, mapKernel2Err(tInterval, func(v arrow.MonthDayNanoInterval, f float64) (arrow.MonthDayNanoInterval, error) {
			if div {
				if f == 0 {
					return v, errDivByZero
				}
				f = 1 / f
			}
			return scaleInterval(v, f)
		}), formInfix, l, r), nil
	case isNumeric(lt) && rid == iv && op == "*":
		e, err := temporalArith(op, r, l)
		if err != nil {
			return nil, err
		}
		c := e.(*Call)
		return newCall(op, c.typ, func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
			return c.fn(ec, []arrow.Array{args[1], args[0]}, n)
		}, formInfix, c.Args[1], c.Args[0]), nil
	case lid == arrow.TIME64 && rid == iv && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		// time + interval uses only the interval's time part, wrapping at midnight
		return newCall(op, tTime, mapKernel2(tTime, func(t arrow.Time64, v arrow.MonthDayNanoInterval) arrow.Time64 {
			return arrow.Time64(floorMod(int64(t)+sign*v.Nanoseconds/1000, usPerDay))
		}), formInfix, l, r), nil
	case lid == arrow.DATE32 && rid == arrow.TIME64 && op == "+":
		return newCall(op, tTimestamp, mapKernel2(tTimestamp, func(d arrow.Date32, t arrow.Time64) arrow.Timestamp {
			return arrow.Timestamp(int64(d)*usPerDay + int64(t))
		}), formInfix, l, r), nil
	case lid == iv && rid == iv && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return newCall(op, tInterval, mapKernel2(tInterval, func(a, b arrow.MonthDayNanoInterval) arrow.MonthDayNanoInterval {
			return arrow.MonthDayNanoInterval{
				Months:      a.Months + int32(sign)*b.Months,
				Days:        a.Days + int32(sign)*b.Days,
				Nanoseconds: a.Nanoseconds + sign*b.Nanoseconds,
			}
		}), formInfix, l, r), nil
	}
	return nil, errNoMatch
}

var errIntervalRange = fmt.Errorf("interval out of range")

// scaleInterval multiplies an interval as Postgres's interval_mul does:
// fractional months spill into days (30 per month) and fractional days
// into time (24 hours per day).
func scaleInterval(v arrow.MonthDayNanoInterval, f float64) (arrow.MonthDayNanoInterval, error) {
	months := float64(v.Months) * f
	wm := math.Trunc(months)
	days := float64(v.Days)*f + (months-wm)*30
	wd := math.Trunc(days)
	us := float64(v.Nanoseconds/1000)*f + (days-wd)*float64(usPerDay)
	if math.IsNaN(us) || math.Abs(wm) > math.MaxInt32 || math.Abs(wd) > math.MaxInt32 || math.Abs(us) > 9.2e18 {
		return v, errIntervalRange
	}
	return arrow.MonthDayNanoInterval{Months: int32(wm), Days: int32(wd), Nanoseconds: int64(math.Round(us)) * 1000}, nil
}

// addIntervalChecked is addInterval, false when the result leaves
// PostgreSQL's timestamp range (or int64 on the way).
func addIntervalChecked(us int64, iv arrow.MonthDayNanoInterval) (int64, bool) {
	if checkTimestamp(us) != nil {
		return 0, false
	}
	// months, days and nanoseconds are bounded by int32/int64: one step
	// at a time, each checked, keeps every intermediate far from overflow
	if iv.Months != 0 {
		us = addInterval(us, arrow.MonthDayNanoInterval{Months: iv.Months})
		if checkTimestamp(us) != nil {
			return 0, false
		}
	}
	us += int64(iv.Days) * usPerDay
	if checkTimestamp(us) != nil {
		return 0, false
	}
	us += iv.Nanoseconds / 1000
	return us, checkTimestamp(us) == nil
}

// addInterval adds months (clamping the day to the month's end, as
// Postgres: Jan 31 + 1 month = Feb 29 in a leap year), then days, then time.
func addInterval(us int64, iv arrow.MonthDayNanoInterval) int64 {
	if iv.Months != 0 {
		days, tod := splitMicros(us)
		y, m, d := civilFromDays(days)
		total := y*12 + (m - 1) + int64(iv.Months)
		ny := floorDiv(total, 12)
		nm := total - ny*12 + 1
		d = min(d, daysInMonth(ny, nm))
		us = daysFromCivil(ny, nm, d)*usPerDay + tod
	}
	return us + int64(iv.Days)*usPerDay + iv.Nanoseconds/1000
}

// mapKernel2 lifts a total per-pair function into a strict binary kernel.
func mapKernel2[A, B, D arrow.FixedWidthType](dt arrow.DataType, f func(A, B) D) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := values[A](args[0]), values[B](args[1])
		buf, out, valid, _ := binaryOut[D](ec.Mem, n, args[0], args[1])
		for i := range out {
			out[i] = f(a[i], b[i])
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

func mapKernel2Err[A, B, D arrow.FixedWidthType](dt arrow.DataType, f func(A, B) (D, error)) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := values[A](args[0]), values[B](args[1])
		buf, out, valid, vb := binaryOut[D](ec.Mem, n, args[0], args[1])
		for i := range out {
			d, err := f(a[i], b[i])
			if err != nil && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, err
			}
			out[i] = d
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

// ---- intervals -------------------------------------------------------------

// parseInterval reads Postgres's interval input: "1 day", "2 hours 30
// minutes", "1 year 2 mons", "-1 day", "03:04:05", "1 day ago", "@ 1 day".
// Fractions cascade down (1.5 days = 1 day 12 hours) as in Postgres.
func parseInterval(s string) (arrow.MonthDayNanoInterval, bool) {
	var iv arrow.MonthDayNanoInterval
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 0 && f[0] == "@" {
		f = f[1:]
	}
	if len(f) == 0 {
		return iv, false
	}
	var months, days float64
	var micros float64
	ago := false
	for i := 0; i < len(f); i++ {
		tok := f[i]
		if tok == "ago" && i == len(f)-1 {
			ago = true
			continue
		}
		if strings.Contains(tok, ":") {
			us, ok := parseIntervalTime(tok)
			if !ok {
				return iv, false
			}
			micros += float64(us)
			continue
		}
		num, err := strconv.ParseFloat(tok, 64)
		unit := ""
		if err != nil {
			// "1day" style: split the number from its unit
			j := strings.IndexFunc(tok, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
			if j <= 0 {
				return iv, false
			}
			if num, err = strconv.ParseFloat(tok[:j], 64); err != nil {
				return iv, false
			}
			unit = tok[j:]
		} else {
			if i+1 >= len(f) {
				// a bare number is seconds
				micros += num * 1e6
				continue
			}
			i++
			unit = f[i]
		}
		switch strings.TrimSuffix(unit, ",") {
		case "microsecond", "microseconds", "us", "usec", "usecs":
			micros += num
		case "millisecond", "milliseconds", "ms", "msec", "msecs":
			micros += num * 1e3
		case "second", "seconds", "s", "sec", "secs":
			micros += num * 1e6
		case "minute", "minutes", "m", "min", "mins":
			micros += num * 6e7
		case "hour", "hours", "h", "hr", "hrs":
			micros += num * 3.6e9
		case "day", "days", "d":
			days += num
		case "week", "weeks", "w":
			days += num * 7
		case "month", "months", "mon", "mons":
			months += num
		case "year", "years", "y", "yr", "yrs":
			months += num * 12
		case "decade", "decades":
			months += num * 120
		case "century", "centuries":
			months += num * 1200
		case "millennium", "millennia", "millenniums":
			months += num * 12000
		default:
			return iv, false
		}
	}
	if math.IsNaN(months+days+micros) || math.IsInf(months+days+micros, 0) {
		return iv, false
	}
	// cascade fractions: a month is 30 days, a day 24 hours
	wm := math.Trunc(months)
	days += (months - wm) * 30
	wd := math.Trunc(days)
	micros += (days - wd) * float64(usPerDay)
	if math.Abs(wm) > math.MaxInt32 || math.Abs(wd) > math.MaxInt32 {
		return iv, false
	}
	iv = arrow.MonthDayNanoInterval{Months: int32(wm), Days: int32(wd), Nanoseconds: int64(math.Round(micros)) * 1000}
	if ago {
		iv = arrow.MonthDayNanoInterval{Months: -iv.Months, Days: -iv.Days, Nanoseconds: -iv.Nanoseconds}
	}
	return iv, true
}

// parseIntervalTime reads an interval's [-]H:MM[:SS[.ffffff]] part; hours
// may pass 24, as Postgres prints them.
func parseIntervalTime(tok string) (int64, bool) {
	neg := strings.HasPrefix(tok, "-")
	tok = strings.TrimLeft(tok, "+-")
	p := scanner{s: tok}
	h, ok := p.digits(1, 12)
	if !ok || p.peek() != ':' {
		return 0, false
	}
	p.pos++
	rest := "00:" + tok[p.pos:] // reuse the TIME parser for MM[:SS[.f]]
	us, ok := parseTimeOfDay(rest)
	if !ok {
		return 0, false
	}
	us += h * usPerHour
	if neg {
		us = -us
	}
	return us, true
}

// ---- date_trunc ------------------------------------------------------------

func resolveDateTrunc(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || (!isString(args[0].DataType()) && !isNull(args[0].DataType())) {
		return nil, errNoMatch
	}
	ts, err := toTimestampArg(args[1])
	if err != nil {
		return nil, err
	}
	unitV, ok := literalValue(args[0])
	if !ok {
		return nil, fmt.Errorf("date_trunc: the unit must be a constant string such as 'day'")
	}
	unit := strings.ToLower(strings.TrimSpace(unitV.String()))
	trunc := truncFunc(unit)
	if trunc == nil {
		return nil, fmt.Errorf("unit %q not recognized for type %s", unit, TypeName(ts.DataType()))
	}
	dt := ts.DataType()
	return newCall(name, dt, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		return mapKernel(dt, func(t arrow.Timestamp) arrow.Timestamp { return arrow.Timestamp(trunc(int64(t))) })(ec, a[1:], n)
	}, formFunc, args[0], ts).skipping(0), nil
}

// truncFunc returns the truncation of a timestamp to unit, or nil.
func truncFunc(unit string) func(int64) int64 {
	fixed := func(step int64) func(int64) int64 {
		return func(us int64) int64 { return floorDiv(us, step) * step }
	}
	byDate := func(f func(y, m, d int64) (int64, int64, int64)) func(int64) int64 {
		return func(us int64) int64 {
			days, _ := splitMicros(us)
			y, m, d := civilFromDays(days)
			y, m, d = f(y, m, d)
			return daysFromCivil(y, m, d) * usPerDay
		}
	}
	switch unit {
	case "microsecond", "microseconds":
		return func(us int64) int64 { return us }
	case "millisecond", "milliseconds":
		return fixed(1000)
	case "second", "seconds":
		return fixed(usPerSecond)
	case "minute", "minutes":
		return fixed(usPerMinute)
	case "hour", "hours":
		return fixed(usPerHour)
	case "day", "days":
		return fixed(usPerDay)
	case "week", "weeks":
		// ISO weeks start on Monday; 1970-01-01 was a Thursday
		return func(us int64) int64 {
			days, _ := splitMicros(us)
			return (days - floorMod(days+3, 7)) * usPerDay
		}
	case "month", "months":
		return byDate(func(y, m, _ int64) (int64, int64, int64) { return y, m, 1 })
	case "quarter", "quarters":
		return byDate(func(y, m, _ int64) (int64, int64, int64) { return y, (m-1)/3*3 + 1, 1 })
	case "year", "years":
		return byDate(func(y, _, _ int64) (int64, int64, int64) { return y, 1, 1 })
	case "decade", "decades":
		return byDate(func(y, _, _ int64) (int64, int64, int64) { return floorDiv(y, 10) * 10, 1, 1 })
	case "century", "centuries":
		return byDate(func(y, _, _ int64) (int64, int64, int64) { return floorDiv(y-1, 100)*100 + 1, 1, 1 })
	case "millennium", "millennia":
		return byDate(func(y, _, _ int64) (int64, int64, int64) { return floorDiv(y-1, 1000)*1000 + 1, 1, 1 })
	}
	return nil
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// ---- extract / date_part -----------------------------------------------

// resolveExtract implements extract(field FROM x) and date_part(field, x).
// date_part returns double precision as in Postgres; extract returns
// bigint for whole-number fields and double precision for second, epoch
// and the sub-second fields (Postgres returns numeric; see the report).
func resolveExtract(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || !isString(args[0].DataType()) {
		return nil, errNoMatch
	}
	fv, ok := literalValue(args[0])
	if !ok {
		return nil, fmt.Errorf("%s: the field must be a constant string such as 'year'", name)
	}
	field := strings.ToLower(strings.TrimSpace(fv.String()))
	x := args[1]
	xt := x.DataType()
	if isUnknownLiteral(x) {
		var err error
		if x, err = NewCast(x, tTimestamp, false); err != nil {
			return nil, err
		}
		xt = tTimestamp
	}
	var get func(us int64) float64
	switch xt.ID() {
	case arrow.DATE32, arrow.TIMESTAMP:
		get = extractField(field)
	case arrow.TIME64:
		switch field {
		case "hour", "minute", "second", "millisecond", "milliseconds", "microsecond", "microseconds", "epoch":
			get = extractField(field)
		}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return extractInterval(name, field, args[0], x)
	default:
		return nil, errNoMatch
	}
	if get == nil {
		return nil, fmt.Errorf("unit %q not supported for type %s", field, TypeName(xt))
	}
	fractional := name == "date_part"
	switch field {
	case "second", "seconds", "epoch", "millisecond", "milliseconds", "julian":
		fractional = true
	}
	var out arrow.DataType = tInt64
	if fractional {
		out = tFloat64
	}
	isDate := xt.ID() == arrow.DATE32
	return newCall(name, out, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		in := a[1]
		var micros func(i int) int64
		if isDate {
			v := values[arrow.Date32](in)
			micros = func(i int) int64 { return int64(v[i]) * usPerDay }
		} else {
			v := values[int64](in)
			micros = func(i int) int64 { return v[i] }
		}
		valid := andValidity(ec.Mem, n, in)
		if fractional {
			buf, o := newFixed[float64](ec.Mem, n)
			for i := range o {
				o[i] = get(micros(i))
			}
			return makeArray(out, n, valid, array.UnknownNullCount, buf), nil
		}
		buf, o := newFixed[int64](ec.Mem, n)
		for i := range o {
			o[i] = int64(get(micros(i)))
		}
		return makeArray(out, n, valid, array.UnknownNullCount, buf), nil
	}, formFunc, args[0], x).skipping(0), nil
}

// extractField returns a field's value from microseconds since the epoch
// (or since midnight, for TIME), or nil for an unknown field.
func extractField(field string) func(int64) float64 {
	ymd := func(f func(y, m, d, days int64) float64) func(int64) float64 {
		return func(us int64) float64 {
			days, _ := splitMicros(us)
			y, m, d := civilFromDays(days)
			return f(y, m, d, days)
		}
	}
	tod := func(f func(tod int64) float64) func(int64) float64 {
		return func(us int64) float64 {
			_, t := splitMicros(us)
			return f(t)
		}
	}
	switch field {
	case "year", "years":
		return ymd(func(y, _, _, _ int64) float64 { return float64(y) })
	case "month", "months":
		return ymd(func(_, m, _, _ int64) float64 { return float64(m) })
	case "day", "days":
		return ymd(func(_, _, d, _ int64) float64 { return float64(d) })
	case "quarter":
		return ymd(func(_, m, _, _ int64) float64 { return float64((m-1)/3 + 1) })
	case "decade":
		return ymd(func(y, _, _, _ int64) float64 { return float64(floorDiv(y, 10)) })
	case "century":
		return ymd(func(y, _, _, _ int64) float64 { return float64(floorDiv(y-1, 100) + 1) })
	case "millennium":
		return ymd(func(y, _, _, _ int64) float64 { return float64(floorDiv(y-1, 1000) + 1) })
	case "dow":
		return ymd(func(_, _, _, days int64) float64 { return float64(floorMod(days+4, 7)) })
	case "isodow":
		return ymd(func(_, _, _, days int64) float64 { return float64(floorMod(days+3, 7) + 1) })
	case "doy":
		return ymd(func(y, _, _, days int64) float64 { return float64(days - daysFromCivil(y, 1, 1) + 1) })
	case "week":
		return ymd(func(_, _, _, days int64) float64 { _, w := isoWeek(days); return float64(w) })
	case "isoyear":
		return ymd(func(_, _, _, days int64) float64 { y, _ := isoWeek(days); return float64(y) })
	case "hour", "hours":
		return tod(func(t int64) float64 { return float64(t / usPerHour) })
	case "minute", "minutes":
		return tod(func(t int64) float64 { return float64(t / usPerMinute % 60) })
	case "second", "seconds":
		return tod(func(t int64) float64 { return float64(t%usPerMinute) / 1e6 })
	case "millisecond", "milliseconds":
		return tod(func(t int64) float64 { return float64(t%usPerMinute) / 1e3 })
	case "microsecond", "microseconds":
		return tod(func(t int64) float64 { return float64(t % usPerMinute) })
	case "epoch":
		return func(us int64) float64 { return float64(us) / 1e6 }
	}
	return nil
}

// isoWeek returns the ISO 8601 year and week of a day.
func isoWeek(days int64) (int64, int64) {
	t := time.Unix(days*86400, 0).UTC()
	y, w := t.ISOWeek()
	return int64(y), int64(w)
}

func extractInterval(name, field string, f, x Expr) (Expr, error) {
	var get func(v arrow.MonthDayNanoInterval) float64
	switch field {
	case "epoch":
		get = func(v arrow.MonthDayNanoInterval) float64 {
			// Postgres counts a month as 30 days and a year as 365.25 days
			years := float64(v.Months / 12)
			months := float64(v.Months % 12)
			return years*365.25*86400 + months*30*86400 + float64(v.Days)*86400 + float64(v.Nanoseconds)/1e9
		}
	case "year", "years":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Months / 12) }
	case "month", "months":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Months % 12) }
	case "day", "days":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Days) }
	case "hour", "hours":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Nanoseconds / 1000 / usPerHour) }
	case "minute", "minutes":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Nanoseconds / 1000 / usPerMinute % 60) }
	case "second", "seconds":
		get = func(v arrow.MonthDayNanoInterval) float64 { return float64(v.Nanoseconds/1000%usPerMinute) / 1e6 }
	default:
		return nil, fmt.Errorf("unit %q not supported for type interval", field)
	}
	return newCall(name, tFloat64, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		return mapKernel(tFloat64, get)(ec, a[1:], n)
	}, formFunc, f, x).skipping(0), nil
}

func makeDateKernel(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
	y, m, d := values[int32](args[0]), values[int32](args[1]), values[int32](args[2])
	valid := andValidity(ec.Mem, n, args...)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	buf, out := newFixed[arrow.Date32](ec.Mem, n)
	for i := range out {
		yy, mm, dd := int64(y[i]), int64(m[i]), int64(d[i])
		if mm < 1 || mm > 12 || dd < 1 || dd > daysInMonth(yy, mm) || yy == 0 {
			if isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, fmt.Errorf("date field value out of range: %d-%02d-%02d", yy, mm, dd)
			}
			out[i] = 0
			continue
		}
		if yy < 0 {
			yy++ // year -1 is 1 BC, which is astronomical year 0
		}
		out[i] = arrow.Date32(daysFromCivil(yy, mm, dd))
	}
	return makeArray(tDate, n, valid, array.UnknownNullCount, buf), nil
}

// makeTimestampKernel implements make_timestamp(year, month, day, hour,
// min, sec) with Postgres's range checks.
func makeTimestampKernel(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
	dates, err := makeDateKernel(ec, args[:3], n)
	if err != nil {
		return nil, err
	}
	defer dates.Release()
	d := values[arrow.Date32](dates)
	h, mi, sec := values[int32](args[3]), values[int32](args[4]), values[float64](args[5])
	valid := andValidity(ec.Mem, n, args...)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	buf, out := newFixed[arrow.Timestamp](ec.Mem, n)
	for i := range out {
		if h[i] < 0 || h[i] > 23 || mi[i] < 0 || mi[i] > 59 || sec[i] < 0 || sec[i] >= 60 || math.IsNaN(sec[i]) {
			if isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, fmt.Errorf("time field value out of range: %d:%02d:%s", h[i], mi[i], strconv.FormatFloat(sec[i], 'f', -1, 64))
			}
			out[i] = 0
			continue
		}
		out[i] = arrow.Timestamp(int64(d[i])*usPerDay + int64(h[i])*usPerHour + int64(mi[i])*usPerMinute + int64(math.Round(sec[i]*1e6)))
	}
	return makeArray(tTimestamp, n, valid, array.UnknownNullCount, buf), nil
}

// ---- strftime ------------------------------------------------------------

func resolveStrftime(name string, args []Expr) (Expr, error) {
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
	return newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		tv := values[int64](a[0])
		fv := newStrView(a[1])
		bld := newStringBuilder(ec.Mem, tString, n, n*20)
		defer bld.Release()
		valid := andValidity(ec.Mem, n, a[0], a[1])
		if valid != nil {
			defer valid.Release()
		}
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		var scratch []byte
		for i := range n {
			if !isValid(vb, i) {
				bld.AppendNull()
				continue
			}
			scratch = appendStrftime(scratch[:0], tv[i], fv.str(i))
			bld.Append(scratch)
		}
		return bld.NewArray(), nil
	}, formFunc, ts, f), nil
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// appendStrftime renders us with C strftime codes (DuckDB's strftime):
// %Y %y %m %d %e %H %I %M %S %f %p %j %a %A %b %B %h %w %u %V %G %F %T %D %z %Z %%.
func appendStrftime(b []byte, us int64, f string) []byte {
	days, tod := splitMicros(us)
	y, m, d := civilFromDays(days)
	h := tod / usPerHour
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			b = append(b, c)
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			b = appendPadded(b, y, 4)
		case 'y':
			b = appendPadded(b, floorMod(y, 100), 2)
		case 'm':
			b = appendPadded(b, m, 2)
		case 'd':
			b = appendPadded(b, d, 2)
		case 'e':
			b = strconv.AppendInt(b, d, 10)
		case 'H':
			b = appendPadded(b, h, 2)
		case 'I':
			h12 := h % 12
			if h12 == 0 {
				h12 = 12
			}
			b = appendPadded(b, h12, 2)
		case 'p':
			if h < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'M':
			b = appendPadded(b, tod/usPerMinute%60, 2)
		case 'S':
			b = appendPadded(b, tod/usPerSecond%60, 2)
		case 'f':
			b = appendPadded(b, tod%usPerSecond, 6)
		case 'j':
			b = appendPadded(b, days-daysFromCivil(y, 1, 1)+1, 3)
		case 'a':
			b = append(b, dayNames[floorMod(days+4, 7)][:3]...)
		case 'A':
			b = append(b, dayNames[floorMod(days+4, 7)]...)
		case 'b', 'h':
			b = append(b, monthNames[m-1][:3]...)
		case 'B':
			b = append(b, monthNames[m-1]...)
		case 'w':
			b = strconv.AppendInt(b, floorMod(days+4, 7), 10)
		case 'u':
			b = strconv.AppendInt(b, floorMod(days+3, 7)+1, 10)
		case 'V':
			_, w := isoWeek(days)
			b = appendPadded(b, w, 2)
		case 'G':
			iy, _ := isoWeek(days)
			b = appendPadded(b, iy, 4)
		case 'F':
			b = appendDate(b, days)
		case 'T':
			b = appendPadded(b, h, 2)
			b = append(b, ':')
			b = appendPadded(b, tod/usPerMinute%60, 2)
			b = append(b, ':')
			b = appendPadded(b, tod/usPerSecond%60, 2)
		case 'D':
			b = appendPadded(b, m, 2)
			b = append(b, '/')
			b = appendPadded(b, d, 2)
			b = append(b, '/')
			b = appendPadded(b, floorMod(y, 100), 2)
		case 'z':
			b = append(b, "+0000"...)
		case 'Z':
			b = append(b, "UTC"...)
		case '%':
			b = append(b, '%')
		default:
			b = append(b, '%', f[i])
		}
	}
	return b
}

package exec

import (
	"strconv"
)

// Calendar arithmetic on the engine's temporal encodings: DATE is days
// since 1970-01-01 (Date32), TIMESTAMP[TZ] is microseconds since the epoch,
// TIME is microseconds since midnight. These helpers are allocation-free so
// that per-row casts and date_trunc stay cheap; time.Time is used only
// where a format needs it.

const (
	usPerSecond = int64(1_000_000)
	usPerMinute = 60 * usPerSecond
	usPerHour   = 60 * usPerMinute
	usPerDay    = 24 * usPerHour
)

// daysFromCivil converts a proleptic Gregorian date to days since the
// epoch (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// floorDiv divides rounding toward negative infinity, so that instants
// before the epoch land on the right day.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// splitMicros splits a timestamp into days since the epoch and
// microseconds into that day.
func splitMicros(us int64) (days, tod int64) {
	days = floorDiv(us, usPerDay)
	return days, us - days*usPerDay
}

// appendDate renders days since the epoch as YYYY-MM-DD, with " BC" for
// years before 1 as Postgres does.
func appendDate(b []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	if bc {
		b = append(b, " BC"...)
	}
	return b
}

// appendTimeOfDay renders microseconds since midnight as HH:MM:SS with a
// fraction trimmed of trailing zeros (Postgres output).
func appendTimeOfDay(b []byte, us int64) []byte {
	b = appendPadded(b, us/usPerHour, 2)
	b = append(b, ':')
	b = appendPadded(b, us/usPerMinute%60, 2)
	b = append(b, ':')
	b = appendPadded(b, us/usPerSecond%60, 2)
	return appendFraction(b, us%usPerSecond)
}

// appendFraction renders a microsecond fraction as ".ffffff" with trailing
// zeros trimmed, or nothing when it is zero.
func appendFraction(b []byte, frac int64) []byte {
	if frac == 0 {
		return b
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for n > 0 && digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// appendTimestamp renders a timestamp in Postgres's ISO output style.
// A BC year puts " BC" after the time, so the date is rendered by hand.
func appendTimestamp(b []byte, us int64, tz bool) []byte {
	days, tod := splitMicros(us)
	y, _, _ := civilFromDays(days)
	if y <= 0 {
		b = appendDate(b, days)
		b = b[:len(b)-3]
	} else {
		b = appendDate(b, days)
	}
	b = append(b, ' ')
	b = appendTimeOfDay(b, tod)
	if tz {
		b = append(b, "+00"...)
	}
	if y <= 0 {
		b = append(b, " BC"...)
	}
	return b
}

func appendPadded(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// parsed is a date/time literal broken into fields.
type parsed struct {
	y, mo, d      int64
	h, mi, s, us  int64
	hasTime       bool
	hasOffset     bool
	offsetSeconds int64
}

// scanner reads a date/time literal left to right.
type scanner struct {
	s   string
	pos int
}

func (p *scanner) done() bool { return p.pos >= len(p.s) }

func (p *scanner) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// digits reads between min and max decimal digits.
func (p *scanner) digits(minN, maxN int) (int64, bool) {
	start := p.pos
	var v int64
	for p.pos < len(p.s) && p.pos-start < maxN && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		v = v*10 + int64(p.s[p.pos]-'0')
		p.pos++
	}
	return v, p.pos-start >= minN
}

func (p *scanner) skipSpaces() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// parseDateTime parses 'YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][ ][Z|(+|-)HH[[:]MM]][ BC]'.
// wantTime says whether a time part may follow. It validates field ranges.
func parseDateTime(s string, wantTime bool) (parsed, bool) {
	var r parsed
	p := scanner{s: s}
	p.skipSpaces()
	var ok bool
	if r.y, ok = p.digits(1, 7); !ok || p.peek() != '-' {
		return r, false
	}
	p.pos++
	if r.mo, ok = p.digits(1, 2); !ok || p.peek() != '-' {
		return r, false
	}
	p.pos++
	if r.d, ok = p.digits(1, 2); !ok {
		return r, false
	}
	if p.peek() == 'T' || p.peek() == 't' || p.peek() == ' ' {
		save := p.pos
		p.pos++
		p.skipSpaces()
		if p.peek() >= '0' && p.peek() <= '9' {
			if !wantTime {
				// a date accepts and ignores a time part, as Postgres does
				if !parseTimeInto(&p, &r) {
					return r, false
				}
				r.hasTime = false
			} else if !parseTimeInto(&p, &r) {
				return r, false
			}
		} else {
			p.pos = save
		}
	}
	p.skipSpaces()
	if c := p.peek(); c == 'Z' || c == 'z' || c == '+' || c == '-' {
		if !parseOffset(&p, &r) {
			return r, false
		}
	}
	p.skipSpaces()
	if len(p.s)-p.pos >= 2 && (p.s[p.pos:p.pos+2] == "BC" || p.s[p.pos:p.pos+2] == "bc") {
		r.y = 1 - r.y
		p.pos += 2
		p.skipSpaces()
	}
	if !p.done() {
		return r, false
	}
	if r.mo < 1 || r.mo > 12 || r.d < 1 || r.d > daysInMonth(r.y, r.mo) {
		return r, false
	}
	return r, true
}

// parseTimeInto parses HH:MM[:SS[.ffffff]] at the scanner's position.
func parseTimeInto(p *scanner, r *parsed) bool {
	var ok bool
	if r.h, ok = p.digits(1, 2); !ok || p.peek() != ':' {
		return false
	}
	p.pos++
	if r.mi, ok = p.digits(2, 2); !ok {
		return false
	}
	if p.peek() == ':' {
		p.pos++
		if r.s, ok = p.digits(2, 2); !ok {
			return false
		}
		if p.peek() == '.' {
			p.pos++
			start := p.pos
			var frac, n int64
			for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
				if n < 7 {
					frac = frac*10 + int64(p.s[p.pos]-'0')
					n++
				}
				p.pos++
			}
			if p.pos == start {
				return false
			}
			for ; n < 7; n++ {
				frac *= 10
			}
			// round the 7th digit half up, as Postgres does
			r.us = (frac + 5) / 10
		}
	}
	r.hasTime = true
	// 24:00:00 is allowed (end of day), as in Postgres
	if r.h > 24 || r.mi > 59 || r.s > 60 || (r.h == 24 && (r.mi != 0 || r.s != 0 || r.us != 0)) {
		return false
	}
	return true
}

// parseOffset parses Z, +HH, +HHMM or +HH:MM.
func parseOffset(p *scanner, r *parsed) bool {
	c := p.peek()
	p.pos++
	r.hasOffset = true
	if c == 'Z' || c == 'z' {
		return true
	}
	hh, ok := p.digits(1, 2)
	if !ok {
		return false
	}
	var mm int64
	if p.peek() == ':' {
		p.pos++
		if mm, ok = p.digits(2, 2); !ok {
			return false
		}
	} else if p.peek() >= '0' && p.peek() <= '9' {
		if mm, ok = p.digits(2, 2); !ok {
			return false
		}
	}
	if hh > 15 || mm > 59 {
		return false
	}
	off := hh*3600 + mm*60
	if c == '-' {
		off = -off
	}
	r.offsetSeconds = off
	return true
}

// micros returns the instant r denotes as microseconds since the epoch,
// applying its offset when honourOffset is set.
func (r parsed) micros(honourOffset bool) int64 {
	us := daysFromCivil(r.y, r.mo, r.d)*usPerDay + r.h*usPerHour + r.mi*usPerMinute + r.s*usPerSecond + r.us
	if honourOffset && r.hasOffset {
		us -= r.offsetSeconds * usPerSecond
	}
	return us
}

// parseTimeOfDay parses a TIME literal.
func parseTimeOfDay(s string) (int64, bool) {
	p := scanner{s: s}
	p.skipSpaces()
	var r parsed
	if !parseTimeInto(&p, &r) {
		return 0, false
	}
	p.skipSpaces()
	if !p.done() {
		return 0, false
	}
	return r.h*usPerHour + r.mi*usPerMinute + r.s*usPerSecond + r.us, true
}

package scan

// Fast paths for the ISO dates and timestamps CSV files mostly hold. A
// profile of a 1.5M-row import spent a third of its CPU in time.Parse,
// which parseTimestamp calls with up to five layouts per value; these
// read the digits directly and fall back to time.Parse for anything
// else (a zone offset, a malformed value, which then gets its message).

// digits2 and digits4 read fixed-width decimal fields; ok is false when a
// byte is not a digit.
func digits2(s string) (int, bool) {
	a, b := s[0]-'0', s[1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

func digits4(s string) (int, bool) {
	hi, ok1 := digits2(s[:2])
	lo, ok2 := digits2(s[2:4])
	return hi*100 + lo, ok1 && ok2
}

// daysIn is the number of days in month m of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// fastDate reads YYYY-MM-DD as days since 1970-01-01.
func fastDate(s string) (int32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits4(s[:4])
	m, ok2 := digits2(s[5:7])
	d, ok3 := digits2(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return int32(daysFromCivil(y, m, d)), true
}

// fastTimestampMicros reads YYYY-MM-DD[ T]HH:MM:SS[.fraction] (no zone)
// as microseconds since the epoch; digits past the sixth of the fraction
// are dropped, as time.Parse and a microsecond column do.
func fastTimestampMicros(s string) (int64, bool) {
	if len(s) < 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	days, ok := fastDate(s[:10])
	if !ok {
		return 0, false
	}
	h, ok1 := digits2(s[11:13])
	mi, ok2 := digits2(s[14:16])
	sec, ok3 := digits2(s[17:19])
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	var frac int64
	if rest := s[19:]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return 0, false
		}
		scale := int64(100000)
		for i := 1; i < len(rest); i++ {
			c := rest[i] - '0'
			if c > 9 {
				return 0, false
			}
			frac += int64(c) * scale
			scale /= 10
		}
	}
	return int64(days)*86_400_000_000 + int64(h)*3_600_000_000 + int64(mi)*60_000_000 + int64(sec)*1_000_000 + frac, true
}

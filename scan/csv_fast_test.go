package scan

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestFastDateAndTimestamp: the fast paths agree with time.Parse on
// valid values (across centuries, leap days and fractions) and refuse
// what time.Parse refuses, so that the slow path reports it.
func TestFastDateAndTimestamp(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var cases []string
	for range 20000 {
		tm := time.Unix(rnd.Int64N(1<<36)-(1<<35), rnd.Int64N(1e9)).UTC()
		if tm.Year() < 0 || tm.Year() > 9999 {
			continue
		}
		cases = append(cases, tm.Format("2006-01-02"), tm.Format("2006-01-02 15:04:05"), tm.Format("2006-01-02T15:04:05.999999999"), tm.Format("2006-01-02 15:04:05.000"))
	}
	cases = append(cases, "2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-1-05",
		"2026-01-05 24:00:00", "2026-01-05 10:60:00", "2026-01-05 10:00:60", "2026-01-05 10:00:00.", "2026-01-05 10:00:00.1234567891",
		"2026-01-05 10:00:00+02:00", "2026-01-05X10:00:00", "abcd-ef-gh", "0001-01-01", "9999-12-31 23:59:59.999999")
	for _, c := range cases {
		if d, ok := fastDate(c); ok {
			want, err := time.Parse("2006-01-02", c)
			if err != nil || int64(d) != want.Unix()/86400 {
				t.Errorf("fastDate(%q) = %d, time.Parse: %v %v", c, d, want, err)
			}
		} else if len(c) == 10 {
			if _, err := time.Parse("2006-01-02", c); err == nil {
				t.Errorf("fastDate(%q) refused what time.Parse reads", c)
			}
		}
		if us, ok := fastTimestampMicros(c); ok {
			want, err := time.Parse("2006-01-02 15:04:05.999999999", c)
			if err != nil {
				want, err = time.Parse("2006-01-02T15:04:05.999999999", c)
			}
			if err != nil || us != want.UnixMicro() {
				t.Errorf("fastTimestampMicros(%q) = %d, time.Parse: %v %v", c, us, want, err)
			}
		} else if len(c) >= 19 && len(c) <= 29 {
			for _, l := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
				if _, err := time.Parse(l, c); err == nil {
					t.Errorf("fastTimestampMicros(%q) refused what time.Parse reads", c)
				}
			}
		}
	}
}

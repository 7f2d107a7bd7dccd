package exec

import "testing"

// FuzzToDate: any input and any template give a date or an error, never
// a panic (go test -fuzz FuzzToDate ./exec to search further).
func FuzzToDate(f *testing.F) {
	for _, s := range [][2]string{
		{"2026-05-06", "YYYY-MM-DD"}, {"", "YYYY"}, {"May", "Mon"}, {"12:00 pm", "HH12:MI AM"},
		{"-44-03-15", "YYYY-MM-DD"}, {"99999999999", "YYYY"}, {"2026-400", "YYYY-DDD"}, {"x", "\"a"},
		{"1.5", "SS.MS"}, {"1.1234567", "SS.US"}, {"Fri", "Dy"}, {"a", "FMDD"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		fields, err := parseDateTemplate(s, compileToChar(format))
		if err == nil {
			_, _ = fields.days(s)
		}
	})
}

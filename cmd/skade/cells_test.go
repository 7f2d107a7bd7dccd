package main

import "testing"

// Floats print as PostgreSQL prints them (psql shows the same text):
// plain notation for exponents in [-4, 15) (6 for real), whatever the
// number of significant digits.
func TestFormatFloatAsPostgres(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits int
		want string
	}{
		{1767225600, 64, "1767225600"},
		{1e20, 64, "1e+20"},
		{1e15, 64, "1e+15"},
		{123456789012345, 64, "123456789012345"},
		{0.0001, 64, "0.0001"},
		{0.00001, 64, "1e-05"},
		{1.5, 32, "1.5"},
		{1234567, 32, "1.234567e+06"},
	} {
		if got := formatFloat(c.v, c.bits); got != c.want {
			t.Errorf("formatFloat(%v, %d) = %q, want %q", c.v, c.bits, got, c.want)
		}
	}
}

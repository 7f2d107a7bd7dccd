package exec

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Decimal128 helpers with Postgres rounding (half away from zero) and
// overflow checks against 38 digits. Values that fit in an int64 take a
// fast path; the rest fall back to math/big, which allocates but is rare.

var errNumericOverflow = errors.New("numeric field overflow")

var maxDec38 = decimal128.GetScaleMultiplier(38)

func decFits38(n decimal128.Num) bool { return n.Abs().Less(maxDec38) }

func decFitsPrecision(n decimal128.Num, p int32) bool {
	return n.Abs().Less(decimal128.GetScaleMultiplier(int(p)))
}

// decI64 returns n as an int64 when it fits.
func decI64(n decimal128.Num) (int64, bool) {
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo>>63 == 0) || (hi == -1 && lo>>63 == 1) {
		return int64(lo), true
	}
	return 0, false
}

func decFromBig(b *big.Int) (decimal128.Num, bool) {
	if b.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	n := decimal128.FromBigInt(b)
	return n, decFits38(n)
}

// decAdd adds with a 38-digit overflow check.
func decAdd(a, b decimal128.Num) (decimal128.Num, bool) {
	if x, ok := decI64(a); ok {
		if y, ok := decI64(b); ok {
			r := x + y
			if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
				return decimal128.FromBigInt(new(big.Int).Add(big.NewInt(x), big.NewInt(y))), true
			}
			return decimal128.FromI64(r), true
		}
	}
	r := a.Add(b)
	// same-signed inputs whose sum changes sign wrapped past 2^127
	if a.Sign() == b.Sign() && a.Sign() != 0 && r.Sign() != a.Sign() {
		return r, false
	}
	return r, decFits38(r)
}

// decMul multiplies with a 38-digit overflow check.
func decMul(a, b decimal128.Num) (decimal128.Num, bool) {
	x, okx := decI64(a)
	y, oky := decI64(b)
	if okx && oky {
		neg := (x < 0) != (y < 0)
		ux, uy := absU64(x), absU64(y)
		hi, lo := bits.Mul64(ux, uy)
		if hi>>63 != 0 {
			return decimal128.Num{}, false
		}
		r := decimal128.New(int64(hi), lo)
		if neg {
			r = r.Negate()
		}
		return r, decFits38(r)
	}
	return decFromBig(new(big.Int).Mul(a.BigInt(), b.BigInt()))
}

func absU64(x int64) uint64 {
	if x < 0 {
		return uint64(-x) // also right for MinInt64
	}
	return uint64(x)
}

// decDivRound divides, rounding half away from zero. d must not be zero.
func decDivRound(n, d decimal128.Num) (decimal128.Num, bool) {
	x, okx := decI64(n)
	y, oky := decI64(d)
	if okx && oky && !(x == math.MinInt64 && y == -1) {
		q, r := x/y, x%y
		if r != 0 && absU64(r) >= absU64(y)-absU64(r) {
			if (x < 0) != (y < 0) {
				q--
			} else {
				q++
			}
		}
		return decimal128.FromI64(q), true
	}
	bn, bd := n.BigInt(), d.BigInt()
	q, r := new(big.Int).QuoRem(bn, bd, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.CmpAbs(bd) >= 0 {
		if bn.Sign() != bd.Sign() {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decFromBig(q)
}

// decRescale changes the scale of n from `from` to `to`, rounding half
// away from zero when it shrinks.
func decRescale(n decimal128.Num, from, to int32) (decimal128.Num, bool) {
	switch {
	case to == from:
		return n, true
	case to > from:
		k := to - from
		if k > 38 {
			return n, n.Sign() == 0
		}
		return decMul(n, decimal128.GetScaleMultiplier(int(k)))
	default:
		k := from - to
		if k > 38 {
			return decimal128.Num{}, true
		}
		return decDivRound(n, decimal128.GetScaleMultiplier(int(k)))
	}
}

// decString renders n with scale digits after the point (Postgres
// numeric output: trailing zeros kept, as the scale says).
func decString(n decimal128.Num, scale int32) string {
	if v, ok := decI64(n); ok && scale >= 0 {
		neg := v < 0
		u := absU64(v)
		var buf [48]byte
		i := len(buf)
		digits := 0
		for u > 0 || digits <= int(scale) {
			i--
			buf[i] = byte('0' + u%10)
			u /= 10
			digits++
			if digits == int(scale) && scale > 0 {
				i--
				buf[i] = '.'
			}
		}
		if neg {
			i--
			buf[i] = '-'
		}
		return string(buf[i:])
	}
	return n.ToString(scale)
}

// parseDecimal parses a numeric literal ("-12.345", "1e3", " 7 ") into a
// decimal of scale s, rounding half away from zero, and checks precision
// p. ok is false on bad syntax; overflow is reported separately.
func parseDecimal(str string, p, s int32) (n decimal128.Num, ok, overflow bool) {
	str = strings.TrimSpace(str)
	if str == "" {
		return n, false, false
	}
	neg := false
	if str[0] == '+' || str[0] == '-' {
		neg = str[0] == '-'
		str = str[1:]
	}
	var intPart, frac string
	exp := 0
	if i := strings.IndexAny(str, "eE"); i >= 0 {
		e, err := parseSmallInt(str[i+1:])
		if err != nil {
			return n, false, false
		}
		exp = e
		str = str[:i]
	}
	if i := strings.IndexByte(str, '.'); i >= 0 {
		intPart, frac = str[:i], str[i+1:]
	} else {
		intPart = str
	}
	if intPart == "" && frac == "" {
		return n, false, false
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return n, false, false
		}
	}
	// value = digits * 10^(exp - len(frac)); we want value * 10^s
	digits := strings.TrimLeft(intPart+frac, "0")
	shift := exp - len(frac) + int(s)
	if digits == "" {
		return decimal128.Num{}, true, false
	}
	if len(digits)+shift > 40 {
		return n, true, true
	}
	b, _ := new(big.Int).SetString(digits, 10)
	if shift >= 0 {
		b.Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	} else {
		if -shift > len(digits) {
			return decimal128.Num{}, true, false
		}
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil)
		q, r := new(big.Int).QuoRem(b, d, new(big.Int))
		if r.Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		b = q
	}
	if neg {
		b.Neg(b)
	}
	n, fits := decFromBig(b)
	if !fits || !decFitsPrecision(n, p) {
		return n, true, true
	}
	return n, true, false
}

func parseSmallInt(s string) (int, error) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || len(s) > 4 {
		return 0, errors.New("bad exponent")
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("bad exponent")
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// decFromFloat converts a float to a decimal of scale s. Like Postgres it
// goes through the shortest decimal text of the float, so 2.675::float8
// rounds to 2.68 at scale 2, not to the binary value's 2.67.
func decFromFloat(f float64, bitSize int, p, s int32) (decimal128.Num, error) {
	if math.IsNaN(f) {
		return decimal128.Num{}, errors.New("cannot convert NaN to numeric")
	}
	if math.IsInf(f, 0) {
		return decimal128.Num{}, errors.New("cannot convert infinity to numeric")
	}
	n, _, overflow := parseDecimal(strconv.FormatFloat(f, 'e', -1, bitSize), p, s)
	if overflow {
		return n, errNumericOverflow
	}
	return n, nil
}

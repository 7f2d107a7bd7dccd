package exec

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// to_char(number, format) with PostgreSQL's numeric template patterns:
// 9 (a digit, blank when a leading zero), 0 (a digit, zero kept), . and D
// (the decimal point), , and G (a group separator, shown after the first
// digit), S (the sign, + or -), MI (minus or blank), PL (plus or blank),
// SG (plus or minus), PR (a negative number in angle brackets), FM (fill
// mode: no padding blanks, no trailing zeros in 9 positions) and "quoted"
// or other literal text. The value is rounded to the template's fraction
// digits, half away from zero for exact numbers; one with more integer
// digits than the template has is shown as # in every digit position.
// Without S, MI, PL, SG or PR a minus sign (or a blank) stands right
// before the first digit, as in PostgreSQL.

func init() {
	register("to_char", resolveToCharNumber)
}

type numTok struct {
	kind byte // '9', '0', '.', ',', 'S', 'M' (MI), 'P' (PL), 'G' (SG), 'R' (PR), 'L' literal
	lit  string
}

type numFormat struct {
	toks       []numTok
	fill       bool
	intDigits  int  // digit positions before the point
	fracDigits int  // after
	firstZero  int  // integer position (0-based, from the left) of the first 0, or intDigits
	sign       bool // S, MI, PL, SG or PR present
}

func compileNumFormat(f string) (*numFormat, error) {
	nf := &numFormat{firstZero: -1}
	seenPoint := false
	// PostgreSQL's checks: which sign patterns go together, and no digit
	// after PR
	var seen = map[string]bool{}
	signCheck := func(p string) error {
		switch {
		case p == "S" && seen["S"]:
			return fmt.Errorf(`cannot use "S" twice`)
		case p == "S" && (seen["PL"] || seen["MI"] || seen["SG"] || seen["PR"]):
			return fmt.Errorf(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		case (p == "PL" || p == "MI" || p == "SG") && seen["S"]:
			return fmt.Errorf(`cannot use "S" and %q together`, p)
		case p == "PR" && (seen["S"] || seen["PL"] || seen["MI"] || seen["SG"]):
			return fmt.Errorf(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		seen[p] = true
		return nil
	}
	lit := func(s string) { nf.toks = append(nf.toks, numTok{kind: 'L', lit: s}) }
	for i := 0; i < len(f); {
		rest := f[i:]
		up := strings.ToUpper(rest)
		switch {
		case up[0] == '"':
			j := strings.IndexByte(rest[1:], '"')
			if j < 0 {
				lit(rest[1:])
				i = len(f)
				continue
			}
			lit(rest[1 : 1+j])
			i += j + 2
		case strings.HasPrefix(up, "FM"):
			nf.fill = true
			i += 2
		case up[0] == '9' || up[0] == '0':
			if seen["PR"] {
				return nil, fmt.Errorf(`"%c" must be ahead of "PR"`, up[0])
			}
			if seenPoint {
				nf.fracDigits++
			} else {
				if up[0] == '0' && nf.firstZero < 0 {
					nf.firstZero = nf.intDigits
				}
				nf.intDigits++
			}
			nf.toks = append(nf.toks, numTok{kind: up[0]})
			i++
		case up[0] == '.' || up[0] == 'D':
			if seenPoint {
				return nil, fmt.Errorf("multiple decimal points")
			}
			seenPoint = true
			nf.toks = append(nf.toks, numTok{kind: '.'})
			i++
		case up[0] == ',' || up[0] == 'G':
			nf.toks = append(nf.toks, numTok{kind: ','})
			i++
		case strings.HasPrefix(up, "MI"), strings.HasPrefix(up, "PL"), strings.HasPrefix(up, "SG"), strings.HasPrefix(up, "PR"):
			if err := signCheck(up[:2]); err != nil {
				return nil, err
			}
			// PL adds a plus; the minus keeps its place before the number
			nf.sign = nf.sign || up[:2] != "PL"
			nf.toks = append(nf.toks, numTok{kind: map[string]byte{"MI": 'M', "PL": 'P', "SG": 'G', "PR": 'R'}[up[:2]]})
			i += 2
		case up[0] == 'S':
			if err := signCheck("S"); err != nil {
				return nil, err
			}
			nf.sign = true
			nf.toks = append(nf.toks, numTok{kind: 'S'})
			i++
		case strings.HasPrefix(up, "EEEE"), strings.HasPrefix(up, "RN"), strings.HasPrefix(up, "TH"), up[0] == 'V', up[0] == 'L', up[0] == 'B':
			return nil, fmt.Errorf("to_char: the numeric format pattern %q is not supported", rest[:min(len(rest), 4)])
		default:
			lit(rest[:1])
			i++
		}
	}
	if nf.firstZero < 0 {
		nf.firstZero = nf.intDigits
	}
	return nf, nil
}

// render formats a number given as its sign and its digits: intPart
// without leading zeros ("0" for none) and fracPart of nf.fracDigits
// digits, or fewer for a double whose digits run out (floatDigits):
// fraction positions past them write nothing, and with none left the
// point goes too, as in PostgreSQL.
func (nf *numFormat) render(neg bool, intPart, fracPart string) string {
	// (even 0 needs an integer position: .9 shows 0.5 as .#)
	overflow := len(intPart) > nf.intDigits
	// without digit positions after it the point is not written, nor
	// anything after it
	noPoint := len(fracPart) == 0 && !overflow
	// without any digit position there is no number to sign, but after a
	// point
	digitless := nf.intDigits+nf.fracDigits == 0
	if intPart == "0" && nf.fracDigits > 0 {
		intPart = "" // 0.5 is .50 under 9.99; a 0 position still shows it
	}
	// FM drops the trailing zeros of 9 positions after the point
	fracKeep := len(fracPart)
	if nf.fill && !overflow {
		var kinds []byte
		after := false
		for _, t := range nf.toks {
			if t.kind == '.' {
				after = true
			} else if after && (t.kind == '9' || t.kind == '0') {
				kinds = append(kinds, t.kind)
			}
		}
		for fracKeep > 0 && kinds[fracKeep-1] == '9' && fracPart[fracKeep-1] == '0' {
			fracKeep--
		}
	}
	// the sign stands before the number's first character unless MI, PL,
	// SG or a trailing S place it: a blank or - (S: + or -; PR: < or a
	// blank)
	anchor := byte(' ')
	anchored := !nf.sign
	for i, t := range nf.toks {
		switch t.kind {
		case 'S':
			// anchored before the number, unless it ends the number
			for _, u := range nf.toks[i+1:] {
				if u.kind == '9' || u.kind == '0' {
					anchor, anchored = 'S', true
				}
			}
		case 'R':
			anchor, anchored = 'R', true
		}
	}
	if digitless {
		anchored = anchored && anchor == 'S' || anchor == ' ' && !nf.sign
	}
	var b strings.Builder
	started := false
	start := func() {
		if started {
			return
		}
		started = true
		if !anchored {
			return
		}
		switch {
		case anchor == 'S' && neg:
			b.WriteByte('-')
		case anchor == 'S':
			b.WriteByte('+')
		case anchor == 'R' && neg:
			b.WriteByte('<')
		case neg:
			b.WriteByte('-')
		case !nf.fill:
			b.WriteByte(' ')
		}
	}
	pad := func() {
		if !nf.fill {
			b.WriteByte(' ')
		}
	}
	// put writes yes when on, else no (a blank, which FM drops)
	put := func(on bool, yes, no byte) {
		switch {
		case on:
			b.WriteByte(yes)
		case no != ' ':
			b.WriteByte(no)
		default:
			pad()
		}
	}
	ip, fp := 0, 0
	afterPoint := false
toks:
	for _, t := range nf.toks {
		switch t.kind {
		case 'L':
			b.WriteString(t.lit)
		case '9', '0':
			if !afterPoint {
				pos := ip
				ip++
				d := pos - (nf.intDigits - len(intPart))
				switch {
				case overflow:
					start()
					b.WriteByte('#')
				case d >= 0:
					start()
					b.WriteByte(intPart[d])
				case pos >= nf.firstZero:
					start()
					b.WriteByte('0')
				default:
					pad()
				}
				continue
			}
			pos := fp
			fp++
			switch {
			case overflow && pos < len(fracPart):
				b.WriteByte('#')
			case pos < fracKeep:
				b.WriteByte(fracPart[pos])
			}
		case '.':
			afterPoint = true
			if noPoint {
				// no digit to write after it: PostgreSQL ends the
				// output here (99.MI writes no sign either)
				break toks
			}
			if digitless {
				b.WriteByte('.')
				start()
				continue
			}
			if !started && nf.fill && fracKeep == 0 && !overflow {
				// FM leaves no digit at all: PostgreSQL writes 0.
				start()
				b.WriteByte('0')
			}
			start()
			b.WriteByte('.')
		case ',':
			if started && !afterPoint {
				b.WriteByte(',')
			} else {
				pad() // none yet, or among the fraction digits
			}
		case 'S':
			if anchor != 'S' { // an anchored S was written before the number
				put(neg, '-', '+')
			}
		case 'M':
			put(neg, '-', ' ')
		case 'P':
			put(!neg, '+', ' ')
		case 'G':
			put(neg, '-', '+')
		case 'R':
			put(neg, '>', ' ')
		}
	}
	if !digitless {
		start()
	}
	return b.String()
}

// decimalDigits renders v, a decimal of the given scale, as its sign,
// integer digits and frac fraction digits, rounded half away from zero.
func decimalDigits(v decimal128.Num, scale int32, frac int) (bool, string, string) {
	n := v.BigInt()
	neg := n.Sign() < 0
	n.Abs(n)
	// round to frac digits, half away from zero
	shift := int(scale) - frac
	switch {
	case shift > 0:
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil)
		q, r := new(big.Int).QuoRem(n, div, new(big.Int))
		if r.Lsh(r, 1).Cmp(div) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		n = q
	case shift < 0:
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil))
	}
	s := n.String()
	if len(s) <= frac {
		s = strings.Repeat("0", frac-len(s)+1) + s
	}
	intPart, fracPart := s[:len(s)-frac], s[len(s)-frac:]
	if n.Sign() == 0 {
		neg = false
	}
	return neg, intPart, fracPart
}

// floatDigits is decimalDigits for a double, as PostgreSQL's float8
// to_char: at most 15 significant digits (DBL_DIG), so a large value
// gets fewer fraction digits than asked, rounded as printf rounds, and
// a negative value that rounds to zero keeps its minus.
func floatDigits(f float64, frac int) (bool, string, string) {
	pre := len(strconv.FormatFloat(math.Abs(f), 'f', 0, 64))
	switch {
	case pre >= 15:
		frac = 0
	case pre+frac > 15:
		frac = 15 - pre
	}
	s := strconv.FormatFloat(math.Abs(f), 'f', frac, 64)
	intPart, fracPart, _ := strings.Cut(s, ".")
	return math.Signbit(f), intPart, fracPart
}

func resolveToCharNumber(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || !isNumeric(args[0].DataType()) {
		return nil, errNoMatch
	}
	f, err := Coerce(args[1], tString)
	if err != nil {
		return nil, errNoMatch
	}
	x := args[0]
	if isInteger(x.DataType()) {
		if x, err = NewCast(x, asDecimal(x.DataType()), false); err != nil {
			return nil, err
		}
	} else if x.DataType().ID() == arrow.FLOAT32 {
		if x, err = NewCast(x, tFloat64, false); err != nil {
			return nil, err
		}
	}
	var fixed *numFormat
	if fv, ok := literalValue(f); ok {
		if fixed, err = compileNumFormat(fv.String()); err != nil {
			return nil, err
		}
	}
	return newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		fmts := newStrView(a[1])
		bld := newStringBuilder(ec.Mem, tString, n, n*12)
		defer bld.Release()
		var dec []decimal128.Num
		var flt []float64
		var scale int32
		if dt, ok := a[0].DataType().(*arrow.Decimal128Type); ok {
			dec, scale = values[decimal128.Num](a[0]), dt.Scale
		} else {
			flt = values[float64](a[0])
		}
		nf := fixed
		last := ""
		for i := range n {
			if a[0].IsNull(i) || a[1].IsNull(i) {
				bld.AppendNull()
				continue
			}
			if fixed == nil {
				if s := fmts.str(i); nf == nil || s != last {
					var err error
					if nf, err = compileNumFormat(s); err != nil {
						return nil, err
					}
					last = s
				}
			}
			var neg bool
			var ip, fp string
			if dec != nil {
				neg, ip, fp = decimalDigits(dec[i], scale, nf.fracDigits)
			} else {
				if math.IsNaN(flt[i]) || math.IsInf(flt[i], 0) {
					// PostgreSQL shows # in every position
					neg, ip, fp = math.IsInf(flt[i], -1), strings.Repeat("9", nf.intDigits+1), strings.Repeat("0", nf.fracDigits)
				} else {
					neg, ip, fp = floatDigits(flt[i], nf.fracDigits)
				}
			}
			bld.Append([]byte(nf.render(neg, ip, fp)))
		}
		return bld.NewArray(), nil
	}, formFunc, x, f), nil
}

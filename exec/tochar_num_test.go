package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// FuzzToCharNumber: any template and value give text or an error, never
// a panic (go test -fuzz FuzzToCharNumber ./exec to search further).
func FuzzToCharNumber(f *testing.F) {
	for _, s := range []string{"9999.99", "FM9,999.90", "S999", "999PR", "SG9", "PL9", "\"$\"9", "D9G9", "0.0.0", "FMMI", "9EEEE", ""} {
		f.Add(s, 1234.5, int64(12345), int32(2))
	}
	f.Fuzz(func(t *testing.T, format string, x float64, n int64, scale int32) {
		nf, err := compileNumFormat(format)
		if err != nil {
			return
		}
		neg, ip, fp := floatDigits(x, nf.fracDigits)
		_ = nf.render(neg, ip, fp)
		if scale < 0 {
			scale = -scale
		}
		neg, ip, fp = decimalDigits(decimal128.FromI64(n), scale%39, nf.fracDigits)
		_ = nf.render(neg, ip, fp)
	})
}

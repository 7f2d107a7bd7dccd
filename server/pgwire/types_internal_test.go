package pgwire

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestNumericBinaryMatchesPgtype: the fast numeric encoder writes the
// bytes pgx's codec writes, for random values and scales and the edges.
func TestNumericBinaryMatchesPgtype(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var codec pgtype.NumericCodec
	m := pgtype.NewMap()
	check := func(u uint64, neg bool, scale int32) {
		t.Helper()
		bi := new(big.Int).SetUint64(u)
		if neg {
			bi.Neg(bi)
		}
		got := appendNumericBinary(nil, u, neg, scale)
		// PostgreSQL's canonical form (no leading or trailing zero
		// digits; zero with weight 0) differs from pgx's bytes, so
		// compare what pgx decodes, and the display scale
		var n pgtype.Numeric
		if err := codec.PlanScan(m, oidNumeric, pgtype.BinaryFormatCode, &n).Scan(got, &n); err != nil {
			t.Fatalf("%s×10^-%d: %x does not decode: %v", bi, scale, got, err)
		}
		want := new(big.Rat).SetFrac(bi, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		have := new(big.Rat).SetInt(n.Int)
		e := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n.Exp))), nil)
		if n.Exp < 0 {
			have.Quo(have, new(big.Rat).SetInt(e))
		} else {
			have.Mul(have, new(big.Rat).SetInt(e))
		}
		if have.Cmp(want) != 0 || int32(binary.BigEndian.Uint16(got[6:])) != scale {
			t.Fatalf("%s×10^-%d: %x decodes as %s", bi, scale, got, have.FloatString(int(scale)))
		}
		if nd := int(binary.BigEndian.Uint16(got)); nd > 0 && (binary.BigEndian.Uint16(got[8:]) == 0 || binary.BigEndian.Uint16(got[8+2*(nd-1):]) == 0) {
			t.Fatalf("%x has a leading or trailing zero digit", got)
		}
		text := appendDecimal(nil, decimal128.FromBigInt(bi), scale)
		if want := decimal128.FromBigInt(bi).ToString(scale); string(text) != want {
			t.Fatalf("text %s, want %s", text, want)
		}
	}
	for _, u := range []uint64{0, 1, 9, 10, 9999, 10000, 10001, 123456789, 1 << 62, 1<<63 - 1} {
		for scale := int32(0); scale <= 15; scale++ {
			check(u, false, scale)
			check(u, true, scale)
		}
	}
	for i := 0; i < 20000; i++ {
		u := r.Uint64() >> (1 + r.IntN(63))
		check(u, r.IntN(2) == 0, int32(r.IntN(16)))
	}
}

func abs(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// TestAppendFloat checks the one-conversion float text against
// strconv's plain and exponent forms chosen by PostgreSQL's rule.
func TestAppendFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ref := func(f float64, bits int) string {
		limit := 15
		if bits == 32 {
			limit = 6
		}
		e := strconv.FormatFloat(f, 'e', -1, bits)
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if exp < -4 || exp >= limit {
			return e
		}
		return strconv.FormatFloat(f, 'f', -1, bits)
	}
	vals := []float64{1, -1, 0.5, 1e15, 1e14, 123456789012345, 1e-4, 1e-5, -0.00012, 3.14159, 1e6, 999999, 1234567}
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			continue
		}
		vals = append(vals, f, float64(float32(f)), r.Float64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	for _, f := range vals {
		if math.IsInf(f, 0) || f == 0 {
			continue // spelled out, not formatted: TestTextForms
		}
		if got, want := string(appendFloat(nil, f, 64)), ref(f, 64); got != want {
			t.Fatalf("%v: %s, want %s", f, got, want)
		}
		f32 := float64(float32(f))
		if math.IsInf(f32, 0) || f32 == 0 {
			continue
		}
		if got, want := string(appendFloat(nil, f32, 32)), ref(f32, 32); got != want {
			t.Fatalf("float32 %v: %s, want %s", f32, got, want)
		}
	}
}

// FuzzDecodeParam: a client's binary parameter of any declared type
// decodes or fails; it never panics.
func FuzzDecodeParam(f *testing.F) {
	for _, oid := range []uint32{oidBool, oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidText, oidBytea, oidDate,
		oidTime, oidTimestamp, oidTimestamptz, oidInterval, oidUUID, oidNumeric, oidJSONB, 0, 12345} {
		f.Add(oid, int16(1), []byte{0, 1, 0, 0, 0, 0, 0, 4, 0x30, 0x39})
		f.Add(oid, int16(0), []byte("12"))
	}
	f.Add(uint32(1007), int16(1), binaryArray(2, 23, []int32{2, 2}, [][]byte{{0, 0, 0, 1}, nil, {0, 0, 0, 3}, {0, 0, 0, 4}}))
	f.Fuzz(func(t *testing.T, oid uint32, format int16, raw []byte) {
		decodeParam(oid, format, raw)
		for _, o := range []uint32{oidNumeric, oidInterval, oidTimestamp, oidDate, oidUUID, 1007, 1009, 1231} {
			decodeParam(o, 1, raw)
		}
	})
}

// binaryArray builds PostgreSQL's binary array format (nil elements are
// NULL).
func binaryArray(ndim int, elemOID uint32, dims []int32, elems [][]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(ndim))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint32(b, elemOID)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
		b = binary.BigEndian.AppendUint32(b, 1)
	}
	for _, e := range elems {
		if e == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

func TestDecodeArrayParam(t *testing.T) {
	for _, c := range []struct {
		raw  []byte
		want string
		err  string
	}{
		{binaryArray(2, oidInt4, []int32{2, 2}, [][]byte{{0, 0, 0, 1}, nil, {0, 0, 0, 3}, {0xff, 0xff, 0xff, 0xff}}), "{{1,NULL},{3,-1}}", ""},
		{binaryArray(1, oidText, []int32{3}, [][]byte{[]byte("a b"), []byte(""), []byte("NULL")}), `{"a b","","NULL"}`, ""},
		{binaryArray(0, oidInt4, nil, nil), "{}", ""},
		{binaryArray(1, oidInt4, []int32{2}, [][]byte{{0, 0, 0, 1}}), "", "invalid binary array"},
		{binaryArray(1, oidInt4, []int32{1}, [][]byte{{0, 0, 1}}), "", "array element 1: invalid binary value of 3 bytes"},
		{binaryArray(1, oidInt4, []int32{-5}, nil), "", "invalid binary array"},
		{[]byte{0, 0, 0, 1}, "", "invalid binary array"},
	} {
		got, err := decodeParam(1007, 1, c.raw)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%x: error %v, want %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%x: %v, %v; want %s", c.raw, got, err, c.want)
		}
	}
}

package mergeinto

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// hybridEncode's output decodes back to its input, for every bit width,
// with runs long and short, at group boundaries and not, and values that
// fill their width.
func TestHybridRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	for w := 1; w <= 32; w++ {
		for trial := range 40 {
			n := r.IntN(300)
			if trial == 0 {
				n = 0
			}
			top := uint32(1)<<w - 1
			if w == 32 {
				top = 1<<31 - 1 // indices are int32
			}
			vals := make([]int32, n)
			for i := range vals {
				switch r.IntN(4) {
				case 0: // a run
					run := 1 + r.IntN(20)
					v := int32(r.Uint32() & top)
					for j := i; j < min(n, i+run); j++ {
						vals[j] = v
					}
				default:
					if vals[i] == 0 {
						vals[i] = int32(r.Uint32() & top)
					}
				}
			}
			enc := hybridEncode(nil, vals, w)
			got, ok := hybridDecode(enc, w, n, nil)
			if !ok || !slices.Equal(got, vals) {
				t.Fatalf("width %d, %d values: decoded %v (ok %v), want %v", w, n, got, ok, vals)
			}
			// fewer values than were encoded: a prefix
			if n > 3 {
				got, ok = hybridDecode(enc, w, n-3, nil)
				if !ok || !slices.Equal(got, vals[:n-3]) {
					t.Fatalf("width %d: a prefix of %d decoded %v (ok %v)", w, n-3, got, ok)
				}
			}
			// more than were encoded (past the padding of the last
			// bit-packed group): refused
			if got, ok := hybridDecode(enc, w, n+9, nil); ok {
				t.Fatalf("width %d: %d values decoded from %d encoded: %v", w, n+9, n, got)
			}
		}
	}
}

// A run of equal values is one RLE run; mixed values are bit-packed.
func TestHybridEncodeRuns(t *testing.T) {
	run := make([]int32, 1000)
	for i := range run {
		run[i] = 5
	}
	if got := hybridEncode(nil, run, 3); len(got) != 3 { // varint(2000) is 2 bytes, the value 1
		t.Fatalf("1,000 equal values of width 3 took %d bytes (%v), want 3", len(got), got)
	}
	mixed := []int32{1, 0, 1, 1, 0, 0, 1, 0, 1, 1}
	got := hybridEncode(nil, mixed, 1)
	// one bit-packed run of two groups (header 2<<1|1), least significant
	// bit first, the last group padded
	if want := []byte{5, 0b01001101, 0b00000011}; !slices.Equal(got, want) {
		t.Fatalf("mixed bits encoded as %08b, want %08b", got, want)
	}
}

// Broken input is refused, never a panic: truncated runs, zero-length
// runs, values wider than the width, widths out of range.
func TestHybridDecodeRefusesBrokenInput(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		w, n int
	}{
		{nil, 1, 1},
		{[]byte{0}, 1, 1},       // a run of none
		{[]byte{1}, 1, 1},       // bit-packed, no groups
		{[]byte{3}, 8, 1},       // a group, no bytes
		{[]byte{4}, 8, 1},       // a run, no value
		{[]byte{4, 0xff}, 3, 1}, // a value wider than 3 bits
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 1, 1}, // an overlong varint
		{[]byte{2, 1}, 33, 1},
		{[]byte{2, 1}, -1, 1},
	} {
		if got, ok := hybridDecode(tc.b, tc.w, tc.n, nil); ok {
			t.Errorf("hybridDecode(%v, %d, %d) = %v, want refused", tc.b, tc.w, tc.n, got)
		}
	}
	r := rand.New(rand.NewPCG(33, 2))
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		hybridDecode(b, r.IntN(34), r.IntN(64), nil) // must not panic
	}
}

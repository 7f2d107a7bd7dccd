package snapshot

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The registered codec round-trips pages through arrow-go's decoder, at
// the default and explicit levels, from many goroutines at once, and for
// pages larger than its window.
func TestZstdCodecRoundTrip(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(zstdCodec); !ok {
		t.Fatalf("the zstd codec is %T, not this package's", c)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	page := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rnd.IntN(4)) // compressible
		}
		return b
	}
	inputs := [][]byte{{}, []byte("x"), page(1000), page(zstdWindow), page(3 * zstdWindow)}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
				for _, in := range inputs {
					enc := c.EncodeLevel(nil, in, level)
					out := c.Decode(nil, enc)
					if !bytes.Equal(out, in) {
						t.Errorf("level %d, %d bytes: round trip failed", level, len(in))
					}
				}
			}
		}()
	}
	wg.Wait()
	if enc := c.Encode(nil, inputs[2]); len(enc) >= len(inputs[2]) {
		t.Errorf("a compressible page did not shrink: %d -> %d bytes", len(inputs[2]), len(enc))
	}
}

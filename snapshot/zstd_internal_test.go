package snapshot

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// TestZstdFramesWithoutChecksum: the registered zstd codec writes frames
// without a content checksum, at the default and at a set level, that
// arrow-go's decoder and a fresh zstd decoder both read back.
func TestZstdFramesWithoutChecksum(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := codec.(zstdCodec); !ok {
		t.Fatalf("the registered zstd codec is %T, not skade's", codec)
	}
	src := make([]byte, 0, 8*50000)
	for i := range 50000 {
		src = binary.LittleEndian.AppendUint64(src, uint64(i)*3)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 9} {
		out := codec.EncodeLevel(nil, src, level)
		if len(out) < 5 || binary.LittleEndian.Uint32(out) != 0xFD2FB528 {
			t.Fatalf("level %d: not a zstd frame", level)
		}
		if out[4]&0x04 != 0 {
			t.Fatalf("level %d: the frame carries a content checksum", level)
		}
		back := codec.Decode(make([]byte, len(src)), out)
		if !bytes.Equal(back, src) {
			t.Fatalf("level %d: arrow-go's decoder read back other bytes", level)
		}
		back, err := dec.DecodeAll(out, nil)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("level %d: zstd's decoder read back other bytes (%v)", level, err)
		}
	}
}

package snapshot

// The zstd codec. skade replaces arrow-go's zstd codec for Parquet pages with
// one whose encoders live in a pool the garbage collector does not empty,
// each with a 1 MiB window.
//
// arrow-go keeps its encoders in a sync.Pool, which every GC clears; each
// new encoder then allocates, and zeroes, a match history sized for
// zstd's 8 MiB default window, for every page it compresses after a GC.
// In a CPU profile of the 1M-row MERGE benchmark, zeroing those buffers
// took 10% of the samples (BENCHMARKS.md, "zstd encoders"). A page is compressed on its own
// (EncodeAll), so a window larger than the page finds nothing more: 1 MiB
// covers Parquet's default page size. The frames carry no content
// checksum (optional in zstd's format; parquet-mr's zstd-jni writes none
// by default either): a Parquet page has its own CRC field, and hashing
// every page twice, once writing and once on every read of it, was 1.3% of
// a merge-on-read MERGE's CPU. Decoding, and every other codec method, is
// arrow-go's own.
//
// It is registered for the process when snapshot is loaded, as every
// write path loads it.

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the encoders' window: Parquet's default page size.
const zstdWindow = 1 << 20

// zstdCodec is arrow-go's zstd codec with Encode and EncodeLevel replaced.
type zstdCodec struct {
	compress.Codec
}

// zstdPools holds idle encoders per level, in channels, which GC leaves be.
var zstdPools sync.Map // zstd.EncoderLevel -> chan *zstd.Encoder

func zstdPool(level zstd.EncoderLevel) chan *zstd.Encoder {
	if p, ok := zstdPools.Load(level); ok {
		return p.(chan *zstd.Encoder)
	}
	p, _ := zstdPools.LoadOrStore(level, make(chan *zstd.Encoder, 2*runtime.GOMAXPROCS(0)))
	return p.(chan *zstd.Encoder)
}

func (c zstdCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	lvl := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		lvl = zstd.EncoderLevelFromZstd(level)
	}
	p := zstdPool(lvl)
	var enc *zstd.Encoder
	select {
	case enc = <-p:
	default:
		var err error
		enc, err = zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(lvl),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow),
			zstd.WithEncoderCRC(false))
		if err != nil {
			// the options are constant and valid: fall back to arrow-go's
			return c.Codec.EncodeLevel(dst, src, level)
		}
	}
	out := enc.EncodeAll(src, dst[:0])
	select {
	case p <- enc:
	default: // enough idle encoders
	}
	return out
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // arrow-go without zstd: nothing to replace
	}
	compress.RegisterCodec(compress.Codecs.Zstd, zstdCodec{orig})
}

package scan

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
)

// NULLs in a plain read. A query's plain read (plainquery.go) takes an
// optional column's pages that hold NULLs too (plainColumn.nulls): a
// page's definition levels (the RLE/bit-packed hybrid at bit width 1)
// become a validity bitmap, and its values, which a page stores for its
// defined rows only, are spread into their rows: a fixed-width page
// into a scratch buffer of a slot a row (a NULL's slot zeroed), a string
// page as it is gathered. The batch gets a validity bitmap from the
// first page with a NULL on (nullBits). Without this, one NULL in a
// column sent the whole file through iceberg-go's scan and pqarrow: a
// scan of 10M rows with a tenth of them NULL took 1.6 times as long
// (BENCHMARKS.md, session 40). MERGE's own plain reads still take no
// NULLs.

// defBitmap decodes n definition levels of an optional, unrepeated
// column (the hybrid encoding at bit width 1) from b into out's first n
// bits (out holds at least (n+7)/8 bytes), and returns how many are 1;
// ok is false where b does not hold n levels of 0 or 1.
func defBitmap(b []byte, n int, out []byte) (defined int, ok bool) {
	at := 0
	for at < n {
		h, k := binary.Uvarint(b)
		if k <= 0 || h == 0 {
			return 0, false
		}
		b = b[k:]
		if h&1 == 0 { // a run of one value, in one byte
			if len(b) < 1 || b[0] > 1 {
				return 0, false
			}
			run := min(int(h>>1), n-at)
			bitutil.SetBitsTo(out, int64(at), int64(run), b[0] == 1)
			if b[0] == 1 {
				defined += run
			}
			b = b[1:]
			at += run
			continue
		}
		// groups of 8 levels bit-packed, one byte a group, first level
		// in the lowest bit: the bitmap's own layout
		groups := h >> 1
		if groups == 0 || groups > uint64(len(b)) {
			return 0, false
		}
		k = min(int(groups)*8, n-at)
		bitutil.CopyBitmap(b, 0, k, out, at)
		defined += bitutil.CountSetBits(b, 0, k)
		b = b[groups:]
		at += k
	}
	return defined, true
}

// spread writes rows values of width w (4 or 8, the widths FixedWidth
// gives) into slots (rows*w bytes), one a row: the next of vals (the
// defined values, packed) where valid's bit is set, zeros where it is
// not. 64 rows at a time where they are all defined (one copy) or all
// NULL (one clear), else row by row without a branch on the bit (the
// branches on w go one way). A copy and a branch a row made the query of
// a column with NULLs slower than pqarrow's read (BENCHMARKS.md, session
// 40).
func spread(slots, vals, valid []byte, rows, w int) {
	j := 0
	for i := 0; i < rows; {
		if i%64 == 0 && rows-i >= 64 {
			switch word := binary.LittleEndian.Uint64(valid[i/8:]); word {
			case ^uint64(0):
				copy(slots[i*w:(i+64)*w], vals[j*w:(j+64)*w])
				i, j = i+64, j+64
				continue
			case 0:
				clear(slots[i*w : (i+64)*w])
				i += 64
				continue
			}
		}
		bit := uint64(valid[i/8]>>(i%8)) & 1
		var v uint64
		if (j+1)*w <= len(vals) {
			if w == 8 {
				v = binary.LittleEndian.Uint64(vals[j*8:])
			} else {
				v = uint64(binary.LittleEndian.Uint32(vals[j*4:]))
			}
		}
		v &= -bit
		if w == 8 {
			binary.LittleEndian.PutUint64(slots[i*8:], v)
		} else {
			binary.LittleEndian.PutUint32(slots[i*4:], uint32(v))
		}
		j += int(bit)
		i++
	}
}

// pageLevels splits data page h of an optional column (body as stored)
// into its definition levels and its values' bytes (decompressed into
// scratch where compressed); ok is false where the page is not one of
// unrepeated values with RLE levels, or its bytes do not add up.
func (c *plainCursor) pageLevels(h pageHeader, body []byte) (levels, vals []byte, ok bool, err error) {
	switch h.typ {
	case pageDataV2:
		k := int64(h.defLen) + int64(h.repLen)
		if h.repLen != 0 || h.numRows != h.numValues || k > int64(len(body)) || k > int64(h.uncompressed) {
			return nil, nil, false, nil
		}
		levels, rest := body[:h.defLen], body[k:]
		size := h.uncompressed - int32(k)
		if c.codec == nil || !h.valuesCompressed {
			return levels, rest, len(rest) == int(size), nil
		}
		if size > maxStringPage {
			return nil, nil, false, nil
		}
		vals, err := c.scratchPage(size, rest)
		return levels, vals, err == nil, err
	case pageData:
		if h.defLevelEncoding != int32(parquet.Encodings.RLE) || h.uncompressed < 4 || h.uncompressed > maxStringPage {
			return nil, nil, false, nil
		}
		data := body
		if c.codec != nil {
			if data, err = c.scratchPage(h.uncompressed, body); err != nil {
				return nil, nil, false, err
			}
		} else if len(data) != int(h.uncompressed) {
			return nil, nil, false, nil
		}
		n := int64(binary.LittleEndian.Uint32(data))
		if n > int64(len(data)-4) {
			return nil, nil, false, nil
		}
		return data[4 : 4+n], data[4+n:], true, nil
	}
	return nil, nil, false, nil
}

// mayHoldNulls reports whether data page h may hold a NULL the read
// takes: a V2 page whose header counts one, or any V1 page (whose header
// does not say) of an optional column whose NULLs the read takes.
func (c *plainCursor) mayHoldNulls(h pageHeader) bool {
	return c.col.nulls && (h.typ == pageData || h.numNulls > 0)
}

// nullLevels splits data page h (body as stored; mayHoldNulls) into its
// values' bytes and its rows' validity: c.valid from bit 0 (c.validAt),
// decoded into c.validBuf, or nil where every row is defined. defined
// counts the defined rows; ok is false where the page does not add up.
func (c *plainCursor) nullLevels(h pageHeader, body []byte) (vals []byte, defined int, ok bool, err error) {
	rows := int(h.numValues)
	c.valid, c.validAt = nil, 0
	levels, vals, ok, err := c.pageLevels(h, body)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	c.validBuf = grow(c.validBuf, (rows+7)/8+8)
	if defined, ok = defBitmap(levels, rows, c.validBuf); !ok {
		return nil, 0, false, nil
	}
	if defined < rows {
		c.valid = c.validBuf
	}
	return vals, defined, true, nil
}

// nullPage takes fixed-width data page h (body as stored) of an optional
// column whose NULLs the read takes: its rows become c.vals, a slot a
// row, with c.valid their validity where one is NULL (nil where none
// is); or, where into holds exactly the page's rows, they are spread
// there (direct), c.vals left empty and c.valid their validity. ok is
// false where the page is not PLAIN values of the column's width, one a
// defined row.
func (c *plainCursor) nullPage(h pageHeader, body, into []byte) (direct, ok bool, err error) {
	w, rows := c.col.width, int(h.numValues)
	if h.encoding != int32(parquet.Encodings.Plain) || int64(rows) > c.left || rows < 0 {
		return false, false, nil
	}
	vals, defined, ok, err := c.nullLevels(h, body)
	if err != nil || !ok || len(vals) != defined*w {
		return false, false, err
	}
	c.left -= int64(rows)
	if len(into) == rows*w {
		if c.valid == nil {
			copy(into, vals)
		} else {
			spread(into, vals, c.valid, rows, w)
		}
		return true, true, nil
	}
	if c.valid == nil {
		c.vals = vals // in scratch
		return false, true, nil
	}
	c.slots = grow(c.slots, rows*w)
	spread(c.slots, vals, c.valid, rows, w)
	c.vals = c.slots[:rows*w]
	return false, true, nil
}

// grow is b with room for n bytes (its contents are not kept).
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// nullBits is the validity bitmap of a batch being made, from the first
// page with a NULL on; buf is nil until then.
type nullBits struct {
	buf  *memory.Buffer
	bits []byte
}

// start allocates the bitmap for a batch of n rows, the first filled of
// them defined, unless it has one.
func (nb *nullBits) start(mem memory.Allocator, n, filled int) {
	if nb.buf != nil {
		return
	}
	nb.buf = writeOnlyBuffer(mem, (n+7)/8, 0)
	nb.bits = nb.buf.Bytes()
	bitutil.SetBitsTo(nb.bits, 0, int64(filled), true)
}

// put sets rows [at, at+k) from src's bits [from, from+k), or to defined
// where src is nil; nothing before start.
func (nb *nullBits) put(at int, src []byte, from, k int) {
	if nb.buf == nil || k == 0 {
		return
	}
	if src == nil {
		bitutil.SetBitsTo(nb.bits, int64(at), int64(k), true)
		return
	}
	bitutil.CopyBitmap(src, from, k, nb.bits, at)
}

// take returns the bitmap and the NULLs among n rows, the caller's to
// release; nil and 0 where none was started or no row is NULL (a batch
// that took only defined rows of pages with NULLs).
func (nb *nullBits) take(n int) (*memory.Buffer, int) {
	if nb.buf == nil {
		return nil, 0
	}
	b := nb.buf
	nb.buf, nb.bits = nil, nil
	nulls := n - bitutil.CountSetBits(b.Bytes(), 0, n)
	if nulls == 0 {
		b.Release()
		return nil, 0
	}
	return b, nulls
}

// release lets go of a bitmap not taken.
func (nb *nullBits) release() {
	if nb.buf != nil {
		nb.buf.Release()
		nb.buf, nb.bits = nil, nil
	}
}

// validCount is how many of valid's bits [from, from+k) are set.
func validCount(valid []byte, from, k int) int {
	if k <= 0 {
		return 0
	}
	return bitutil.CountSetBits(valid, from, k)
}

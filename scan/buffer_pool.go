package scan

import (
	"bytes"
	"flag"
	"math/bits"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BufferPool is a memory.Allocator that recycles large buffers. Reading
// Parquet through pqarrow allocates a fresh values buffer for every batch
// of every column (a batch's buffer goes to the Arrow array it becomes),
// and with memory.GoAllocator each is a large, zeroed, page-faulting Go
// allocation that the garbage collector must then find dead: half the CPU
// of a clean scan (BENCHMARKS.md, "Scans: recycled read buffers"). A
// buffer freed here, when the last array holding it is released, serves
// the next allocation of its size class instead.
//
// Buffers of at least poolMin bytes are pooled by power-of-two capacity
// in sync.Pools, so the garbage collector still reclaims what sits idle.
// Smaller ones are plain Go allocations, as with memory.GoAllocator.
//
// INVARIANT: a buffer is handed out zeroed and 64-byte aligned, as
// memory.GoAllocator hands them out, so readers written against it behave
// the same.
//
// Pooling turns a use after Release, harmless with memory.GoAllocator,
// into reading another batch's data. Under `go test` (not benchmarks), or
// with SKADE_POISON_FREED=1, Free first overwrites the whole buffer with
// poisonByte, so such a use reads garbage and the tests' answers go wrong;
// buffers from 64 bytes up are pooled then, so that the tests' small
// tables go through the pool too. Setting it found two such uses (a test
// keeping strings of a released batch, and the shell's table renderer
// keeping a released result's strings), and that arrow-go reads a
// buffer's capacity as room to write (so Allocate gives cap == len).
type BufferPool struct {
	pools  [64]sync.Pool // class k holds buffers of at least 1<<k bytes
	once   sync.Once     // sets poison and min at the first use
	poison bool
	min    int // the smallest buffer pooled
}

const (
	poolMin    = 16 << 10
	poisonByte = 0xA5
)

// ReadBuffers is the pool scans read their Parquet data into.
var ReadBuffers = NewBufferPool()

// NewBufferPool returns an empty pool.
func NewBufferPool() *BufferPool { return &BufferPool{} }

// setup picks the mode at the first use, when a test binary's flags are
// parsed: SKADE_POISON_FREED=1 or 0 decides; otherwise poison under go
// test, except in a benchmark run (-test.bench), which measures the
// production mode.
func (p *BufferPool) setup() {
	p.once.Do(func() {
		p.min = poolMin
		poison := false
		switch os.Getenv("SKADE_POISON_FREED") {
		case "1":
			poison = true
		case "0":
		default:
			if testing.Testing() {
				f := flag.Lookup("test.bench")
				poison = f == nil || f.Value.String() == ""
			}
		}
		if poison {
			p.poison, p.min = true, 64
		}
	})
}

var _ memory.Allocator = (*BufferPool)(nil)

// Allocate returns a zeroed buffer of size bytes whose capacity is its
// length, as memory.GoAllocator's are (arrow-go code reads a buffer's
// capacity as room it may write).
func (p *BufferPool) Allocate(size int) []byte {
	b, recycled := p.take(size)
	if recycled {
		clear(b)
	}
	return b
}

// AllocateUninit is Allocate without the zeroing, for a caller that
// writes every byte of the buffer before anything reads it (a plain
// read's values, plain.go): a recycled buffer holds what it last held
// (poisonByte under go test), a fresh one zeroes.
func (p *BufferPool) AllocateUninit(size int) []byte {
	b, _ := p.take(size)
	return b
}

// take returns a buffer of size bytes whose capacity is its length:
// recycled (holding what it last held), or fresh and zeroed.
func (p *BufferPool) take(size int) (b []byte, recycled bool) {
	p.setup()
	if size >= p.min {
		// class k's buffers all fit; class k-1's (when size is not a
		// power of two) may, and a buffer freed at this very size went
		// there
		k := bits.Len(uint(size - 1))
		if v := p.pools[k].Get(); v != nil {
			return (*v.(*[]byte))[:size:size], true
		}
		if j := bits.Len(uint(size)) - 1; j != k {
			if v := p.pools[j].Get(); v != nil {
				if full := *v.(*[]byte); cap(full) >= size {
					return full[:size:size], true
				}
				p.pools[j].Put(v)
			}
		}
	}
	return alignedMake(size), false
}

// alignedMake is a zeroed slice of size bytes whose first byte is 64-byte
// aligned.
func alignedMake(size int) []byte {
	buf := make([]byte, size+64)
	addr := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	shift := (addr+63)&^63 - addr
	return buf[shift : shift+size : shift+size]
}

// Reallocate resizes b to size bytes, keeping its contents, as
// memory.GoAllocator does. A b that moves is not freed: arrow-go's
// readers may still hold slices of it.
func (p *BufferPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	return nb
}

// Free takes back a buffer whose last reference is gone. It is pooled in
// the class of the largest power of two its capacity holds, so that every
// buffer in class k holds at least 1<<k bytes; small and unaligned ones
// (a slice a caller wrapped) are left to the garbage collector.
func (p *BufferPool) Free(b []byte) {
	p.setup()
	c := cap(b)
	if c < p.min || uintptr(unsafe.Pointer(unsafe.SliceData(b)))&63 != 0 {
		return
	}
	b = b[:c]
	if p.poison {
		for i := range b {
			b[i] = poisonByte
		}
	}
	p.pools[bits.Len(uint(c))-1].Put(&b)
}

// Detached returns a copy of b in plain Go memory, which no pool reuses,
// and releases b. What a statement hands its caller goes through it: a
// caller may keep what arrow-go's accessors return (String.Value shares
// the array's bytes) after releasing the batch, which pooled memory would
// turn into another batch's data.
func Detached(b arrow.RecordBatch) arrow.RecordBatch {
	defer b.Release()
	cols := make([]arrow.Array, b.NumCols())
	for i, c := range b.Columns() {
		d := detachData(c.Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

// detachData copies d's buffers, children and dictionary whole (offsets
// stay as they are, so every type is copied the same way), or, for a
// flat array that is a small slice of its buffers, just the slice's part
// (detachSlice).
func detachData(d arrow.ArrayData) arrow.ArrayData {
	if out := detachSlice(d); out != nil {
		return out
	}
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b != nil {
			bufs[i] = memory.NewBufferBytes(bytes.Clone(b.Bytes()))
		}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = detachData(c)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		dd := detachData(dict)
		out.SetDictionary(dd)
		dd.Release()
	}
	return out
}

// detachSlice is d copied, just the rows it holds, into Go memory with
// offset 0, where d is a flat array (fixed-width, boolean, string or
// binary; no children, no dictionary) whose buffers hold more than twice
// what its rows take; nil otherwise. An operator that hands out slices of
// one large result (a GROUP BY's million groups, in batches) made each
// batch copy the whole of it: 3 GB copied for 1M groups of two
// aggregates (BENCHMARKS.md, session 41).
func detachSlice(d arrow.ArrayData) arrow.ArrayData {
	if len(d.Children()) > 0 || d.DataType().ID() == arrow.DICTIONARY {
		return nil
	}
	n := int64(d.Len())
	need := (n + 7) / 8 // a validity bitmap
	switch dt := d.DataType().(type) {
	case *arrow.StringType, *arrow.BinaryType:
		bufs := d.Buffers()
		if len(bufs) < 3 || bufs[1] == nil {
			return nil
		}
		offs := arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())
		lo, hi := d.Offset(), d.Offset()+d.Len()
		if hi >= len(offs) {
			return nil
		}
		need += (n+1)*4 + int64(offs[hi]-offs[lo])
	case *arrow.BooleanType:
		need += (n + 7) / 8
	case arrow.FixedWidthDataType:
		if dt.ID() == arrow.EXTENSION || dt.BitWidth() <= 0 {
			return nil
		}
		need += (n*int64(dt.BitWidth()) + 7) / 8
	default:
		return nil
	}
	var have int64
	for _, b := range d.Buffers() {
		if b != nil {
			have += int64(b.Len())
		}
	}
	if have <= 2*need+4096 {
		return nil // a whole copy costs about the same
	}
	a := array.MakeFromData(d)
	defer a.Release()
	c, err := array.Concatenate([]arrow.Array{a}, memory.DefaultAllocator)
	if err != nil {
		return nil
	}
	defer c.Release()
	out := c.Data()
	out.Retain()
	return out
}

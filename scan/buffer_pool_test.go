package scan

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func TestBufferPool(t *testing.T) {
	p := NewBufferPool()
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))&63 == 0 }
	a := p.Allocate(100_000)
	if len(a) != 100_000 || cap(a) != 100_000 || !aligned(a) {
		t.Fatalf("Allocate(100000): len %d cap %d aligned %v; want both 100000, aligned", len(a), cap(a), aligned(a))
	}
	for i := range a {
		a[i] = 7
	}
	addr := unsafe.SliceData(a)
	p.Free(a)
	if !p.poison {
		t.Fatal("a test binary runs the pool in poison mode")
	}
	if a[0] != poisonByte || a[len(a)-1] != poisonByte {
		t.Fatalf("a freed buffer is not poisoned: %x … %x", a[0], a[len(a)-1])
	}
	// a freed buffer (class 16: 65,536 bytes and more) serves a request
	// that fits, zeroed, with capacity equal to its length. sync.Pool may
	// drop what it is given (at a GC, and a quarter of it under the race
	// detector), so each round frees a buffer of its own and looks for it.
	var reused bool
	for round := range 100 {
		if round > 0 {
			a = p.Allocate(100_000)
			addr = unsafe.SliceData(a)
			p.Free(a)
		}
		b := p.Allocate(60_000)
		if len(b) != 60_000 || cap(b) != 60_000 || !aligned(b) {
			t.Fatalf("Allocate(60000): len %d cap %d", len(b), cap(b))
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Allocate gave a non-zero byte %x at %d", v, i)
			}
		}
		if unsafe.SliceData(b) == addr {
			reused = true
			break
		}
	}
	if !reused {
		t.Fatal("a freed buffer was never handed out again")
	}
	// Reallocate keeps contents; growing moves, shrinking does not
	c := p.Allocate(1000)
	c[999] = 9
	d := p.Reallocate(5000, c)
	if len(d) != 5000 || d[999] != 9 || d[4999] != 0 {
		t.Fatalf("Reallocate grow: len %d, d[999]=%d d[4999]=%d", len(d), d[999], d[4999])
	}
	if e := p.Reallocate(10, d); len(e) != 10 || unsafe.SliceData(e) != unsafe.SliceData(d) {
		t.Fatal("Reallocate shrink moved the buffer")
	}
	// a slice the pool did not align is left alone
	odd := make([]byte, 4096+1)[1:]
	if aligned(odd) {
		odd = odd[1:]
	}
	p.Free(odd)
	if odd[0] == poisonByte {
		t.Fatal("Free poisoned an unaligned foreign slice")
	}
}

// A batch built in pooled memory and detached keeps its values after the
// original is released and its buffers poisoned.
func TestDetached(t *testing.T) {
	p := NewBufferPool()
	ib := array.NewInt64Builder(p)
	sb := array.NewStringBuilder(p)
	lb := array.NewListBuilder(p, arrow.PrimitiveTypes.Int32)
	db := array.NewDictionaryBuilder(p, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i := range 1000 {
		ib.Append(int64(i))
		if i%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("value-" + string(rune('a'+i%26)))
		}
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i), int32(i * 2)}, nil)
		if err := db.AppendString([]string{"x", "y", "z"}[i%3]); err != nil {
			t.Fatal(err)
		}
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), lb.NewArray(), db.NewArray()}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: cols[0].DataType()}, {Name: "s", Type: cols[1].DataType(), Nullable: true},
		{Name: "l", Type: cols[2].DataType()}, {Name: "d", Type: cols[3].DataType()},
	}, nil)
	rec := array.NewRecordBatch(schema, cols, 1000)
	sliced := rec.NewSlice(10, 900) // offsets not zero
	for _, c := range cols {
		c.Release()
	}
	rec.Release()
	want := make([]string, 4)
	for i := range want {
		want[i] = sliced.Column(i).String()
	}
	orig := map[*byte]bool{}
	for _, c := range sliced.Columns() {
		bufferAddrs(c.Data(), orig)
	}
	out := Detached(sliced) // releases sliced: the pooled buffers are freed and poisoned
	defer out.Release()
	if out.NumRows() != 890 {
		t.Fatalf("rows %d, want 890", out.NumRows())
	}
	copied := map[*byte]bool{}
	for _, c := range out.Columns() {
		bufferAddrs(c.Data(), copied)
	}
	for a := range copied {
		if orig[a] {
			t.Fatal("the detached batch shares a buffer with the original")
		}
	}
	for i := range want {
		if got := out.Column(i).String(); got != want[i] {
			t.Fatalf("column %d after the original was freed:\n got %.200s\nwant %.200s", i, got, want[i])
		}
	}
}

func bufferAddrs(d arrow.ArrayData, into map[*byte]bool) {
	for _, b := range d.Buffers() {
		if b != nil && b.Len() > 0 {
			into[unsafe.SliceData(b.Bytes())] = true
		}
	}
	for _, c := range d.Children() {
		bufferAddrs(c, into)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		bufferAddrs(dict, into)
	}
}

// A buffer freed at a size that is not a power of two goes to the class
// below its size, and a request of the same size finds it there; a
// smaller buffer of that class is passed over (and kept) for a larger
// request.
func TestBufferPoolSameSize(t *testing.T) {
	p := NewBufferPool()
	const size = 1<<20 + 64 // as arrow-go asks for 131,080 8-byte values
	// get is Allocate(n), which must be n long and zeroed
	get := func(n int) []byte {
		b := p.Allocate(n)
		if len(b) != n || cap(b) != n || b[0] != 0 || b[n-1] != 0 {
			t.Fatalf("Allocate(%d): len %d cap %d, first and last %x %x", n, len(b), cap(b), b[0], b[n-1])
		}
		return b
	}
	// sync.Pool may drop what it is given (at a GC, and a quarter of it
	// under the race detector): each round below frees buffers of its
	// own and looks for them, and one round of 100 must see them kept
	reused := false
	for range 100 {
		a := get(size)
		p.Free(a)
		if reused = unsafe.SliceData(get(size)) == unsafe.SliceData(a); reused {
			break
		}
	}
	if !reused {
		t.Fatal("a buffer freed at a size was never handed out again for that size")
	}
	kept := false
	for range 100 {
		small := get(1<<20 + 8)
		smallAddr := unsafe.SliceData(small)
		p.Free(small) // class 20, as the size-long buffer was
		if b := get(size); unsafe.SliceData(b) == smallAddr {
			t.Fatalf("Allocate(%d) after a smaller free gave the smaller buffer", size)
		}
		if kept = unsafe.SliceData(get(1<<20+8)) == smallAddr; kept {
			break
		}
	}
	if !kept {
		t.Fatal("the smaller buffer passed over was not kept for a request it fits")
	}
}

// AllocateUninit hands out buffers as Allocate does (length and capacity
// the size asked for, 64-byte aligned), a recycled one as it was freed
// (poisoned under go test), and a fresh one zeroed.
func TestBufferPoolAllocateUninit(t *testing.T) {
	p := NewBufferPool()
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))&63 == 0 }
	fresh := p.AllocateUninit(70_000)
	if len(fresh) != 70_000 || cap(fresh) != 70_000 || !aligned(fresh) {
		t.Fatalf("AllocateUninit(70000): len %d cap %d aligned %v", len(fresh), cap(fresh), aligned(fresh))
	}
	var reused bool
	for round := range 100 {
		a := p.Allocate(100_000)
		addr := unsafe.SliceData(a)
		p.Free(a)
		b := p.AllocateUninit(60_000)
		if len(b) != 60_000 || cap(b) != 60_000 || !aligned(b) {
			t.Fatalf("round %d: len %d cap %d aligned %v", round, len(b), cap(b), aligned(b))
		}
		if unsafe.SliceData(b) == addr {
			reused = true
			if b[0] != poisonByte || b[len(b)-1] != poisonByte {
				t.Fatalf("a recycled buffer was cleared: %x … %x", b[0], b[len(b)-1])
			}
			break
		}
		for _, c := range b {
			if c != 0 && c != poisonByte {
				t.Fatalf("round %d: a buffer holding %x", round, c)
			}
		}
	}
	if !reused {
		t.Fatal("no freed buffer was handed out again in 100 rounds")
	}
}

// TestDetachedSmallSlices: a batch that is a small slice of large arrays
// (a GROUP BY's results, handed out in batches) is detached as just its
// rows, not its arrays' whole buffers, each of which every batch copied:
// fixed-width, boolean, string and binary columns with NULLs, slices at
// the start, the middle and the end. The rows survive the original's
// buffers being freed (and poisoned) and share none of them.
func TestDetachedSmallSlices(t *testing.T) {
	const n = 100_000
	for _, cut := range [][2]int64{{0, 100}, {50_000, 50_123}, {n - 77, n}} {
		p := NewBufferPool()
		ib := array.NewInt64Builder(p)
		fb := array.NewFloat64Builder(p)
		bb := array.NewBooleanBuilder(p)
		sb := array.NewStringBuilder(p)
		yb := array.NewBinaryBuilder(p, arrow.BinaryTypes.Binary)
		for i := range n {
			ib.Append(int64(i) * 3)
			if i%5 == 0 {
				fb.AppendNull()
				bb.AppendNull()
				sb.AppendNull()
			} else {
				fb.Append(float64(i) / 4)
				bb.Append(i%3 == 0)
				sb.Append(fmt.Sprintf("v%d", i))
			}
			yb.Append([]byte{byte(i), byte(i >> 8)})
		}
		cols := []arrow.Array{ib.NewArray(), fb.NewArray(), bb.NewArray(), sb.NewArray(), yb.NewArray()}
		var fields []arrow.Field
		for i, c := range cols {
			fields = append(fields, arrow.Field{Name: fmt.Sprint("c", i), Type: c.DataType(), Nullable: true})
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
		for _, c := range cols {
			c.Release()
		}
		sliced := rec.NewSlice(cut[0], cut[1])
		rec.Release()
		want := make([]string, len(cols))
		orig := map[*byte]bool{}
		for i, c := range sliced.Columns() {
			want[i] = c.String()
			bufferAddrs(c.Data(), orig)
		}
		out := Detached(sliced)
		rows := cut[1] - cut[0]
		for i, c := range out.Columns() {
			if got := c.String(); got != want[i] {
				t.Fatalf("rows %v, column %d:\n got %.200s\nwant %.200s", cut, i, got, want[i])
			}
			copied := map[*byte]bool{}
			bufferAddrs(c.Data(), copied)
			var bytes int64
			for a := range copied {
				if orig[a] {
					t.Fatalf("rows %v, column %d shares a buffer with the original", cut, i)
				}
			}
			for _, b := range c.Data().Buffers() {
				if b != nil {
					bytes += int64(b.Len())
				}
			}
			if bytes > rows*16+256 {
				t.Fatalf("rows %v, column %d: %d bytes detached for %d rows; the slice's part of the buffers, not the whole", cut, i, bytes, rows)
			}
		}
		out.Release()
	}
}

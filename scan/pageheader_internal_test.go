package scan

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// compactWriter writes thrift compact protocol fields, for headers no
// arrow-go writer makes (a CRC, unknown fields, long-form field ids).
type compactWriter struct {
	b    []byte
	last []int16
}

func (w *compactWriter) field(id int16, typ byte) {
	last := w.last[len(w.last)-1]
	if d := id - last; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.b = binary.AppendUvarint(w.b, uint64(int64(id)<<1^int64(id)>>15))
	}
	w.last[len(w.last)-1] = id
}

func (w *compactWriter) i32(id int16, v int32) {
	w.field(id, ctI32)
	w.b = binary.AppendUvarint(w.b, uint64(uint32(v<<1^v>>31)))
}

func (w *compactWriter) binary(id int16, v []byte) {
	w.field(id, ctBinary)
	w.b = binary.AppendUvarint(w.b, uint64(len(v)))
	w.b = append(w.b, v...)
}

func (w *compactWriter) begin(id int16) {
	w.field(id, ctStruct)
	w.last = append(w.last, 0)
}

func (w *compactWriter) end() {
	w.b = append(w.b, 0)
	w.last = w.last[:len(w.last)-1]
}

// TestReadPageHeader: headers as writers other than arrow-go make them
// (a CRC, statistics, fields this reader does not know, a field id in
// long form, is_compressed false) read right; truncated or malformed ones
// are errors.
func TestReadPageHeader(t *testing.T) {
	w := &compactWriter{last: []int16{0}}
	w.i32(1, pageDataV2)
	w.i32(2, 1000)
	w.i32(3, 700)
	w.i32(4, -12345) // crc
	w.begin(8)
	w.i32(1, 120)
	w.i32(2, 0)
	w.i32(3, 120)
	w.i32(4, int32(parquet.Encodings.Plain))
	w.i32(5, 9)
	w.i32(6, 0)
	w.field(7, ctBoolFalse)
	w.begin(8) // statistics
	w.binary(1, []byte("max"))
	w.binary(2, []byte("min"))
	w.binary(5, []byte{1, 2, 3})
	w.end()
	w.end()
	w.i32(300, 7) // a field from a later format version, long form
	w.field(301, ctList)
	w.b = append(w.b, 0x35) // three i32s
	w.b = binary.AppendUvarint(w.b, 2)
	w.b = binary.AppendUvarint(w.b, 4)
	w.b = binary.AppendUvarint(w.b, 6)
	w.end()
	hdr := w.b
	body := append(slicesRepeat(0xab, 700), 1, 2, 3)
	h, n, err := readPageHeader(append(append([]byte{}, hdr...), body...))
	if err != nil {
		t.Fatal(err)
	}
	want := pageHeader{typ: pageDataV2, uncompressed: 1000, compressed: 700, numValues: 120, numRows: 120, encoding: int32(parquet.Encodings.Plain), defLen: 9, hasData: true}
	if h != want || n != len(hdr) {
		t.Fatalf("got %+v (%d bytes), want %+v (%d bytes)", h, n, want, len(hdr))
	}
	for cut := range len(hdr) {
		if _, _, err := readPageHeader(hdr[:cut]); err == nil {
			t.Fatalf("a header cut to %d of %d bytes read", cut, len(hdr))
		}
	}
	// a required field missing: no compressed_page_size
	w = &compactWriter{last: []int16{0}}
	w.i32(1, pageData)
	w.i32(2, 10)
	w.end()
	if _, _, err := readPageHeader(w.b); err == nil {
		t.Fatal("a header without compressed_page_size read")
	}
	// nesting past any real header's depth
	deep := bytes.Repeat([]byte{0x1c}, 200) // field 1, a struct, 200 deep
	if _, _, err := readPageHeader(deep); err == nil {
		t.Fatal("200 nested structs read")
	}
	// a binary longer than what is left
	w = &compactWriter{last: []int16{0}}
	w.field(9, ctBinary)
	w.b = binary.AppendUvarint(w.b, 1<<40)
	if _, _, err := readPageHeader(w.b); err == nil {
		t.Fatal("a binary of 2^40 bytes read")
	}
}

func slicesRepeat(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// realPageHeaders are the page headers of a file arrow-go writes with
// V1 and V2 pages.
func realPageHeaders(t testing.TB) [][]byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	rec := plainTestRecord(mem, 3000, 100)
	defer rec.Release()
	var out [][]byte
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(parquet.WithDataPageVersion(v), parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDataPageSize(2<<10), parquet.WithMaxRowGroupLength(1000)), pqarrow.DefaultWriterProps())
		if err == nil {
			err = w.Write(rec)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		pr, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		md := pr.MetaData()
		for g := range md.NumRowGroups() {
			for c := range md.Schema.NumColumns() {
				chunk := chunkBytes(md, b, g, c)
				for len(chunk) > 0 {
					h, n, err := readPageHeader(chunk)
					if err != nil {
						t.Fatalf("v%d, group %d, column %d: %v", v+1, g, c, err)
					}
					out = append(out, chunk[:n])
					chunk = chunk[n+int(h.compressed):]
				}
			}
		}
		pr.Close()
	}
	return out
}

// TestReadPageHeaderOfArrowGo: every page of arrow-go's V1 and V2 files
// walks to its chunk's end (realPageHeaders fails otherwise), and the
// headers say what arrow-go's page reader says of the same pages.
func TestReadPageHeaderOfArrowGo(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := plainTestRecord(mem, 3000, 100)
	defer rec.Release()
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		b := writePlainTest(t, rec, parquet.WithDataPageVersion(v), parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDataPageSize(2<<10), parquet.WithMaxRowGroupLength(1000))
		pr, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		md := pr.MetaData()
		pages := 0
		for g := range md.NumRowGroups() {
			for c := range md.Schema.NumColumns() {
				chunk := chunkBytes(md, b, g, c)
				prd, err := pr.RowGroup(g).GetColumnPageReader(c)
				if err != nil {
					t.Fatal(err)
				}
				for prd.Next() {
					h, n, err := readPageHeader(chunk)
					if err != nil {
						t.Fatal(err)
					}
					chunk = chunk[n+int(h.compressed):]
					pages++
					switch p := prd.Page().(type) {
					case *file.DictionaryPage:
						if h.typ != pageDictionary || h.numValues != p.NumValues() || h.encoding != int32(p.Encoding()) {
							t.Fatalf("dictionary page: %+v", h)
						}
					case *file.DataPageV1:
						if h.typ != pageData || h.numValues != p.NumValues() || h.encoding != int32(p.Encoding()) || h.defLevelEncoding != int32(p.DefinitionLevelEncoding()) || h.uncompressed != p.UncompressedSize() {
							t.Fatalf("v1 page: %+v, arrow-go reads %d values, encoding %d", h, p.NumValues(), p.Encoding())
						}
					case *file.DataPageV2:
						if h.typ != pageDataV2 || h.numValues != p.NumValues() || h.numNulls != p.NumNulls() || h.numRows != p.NumRows() || h.encoding != int32(p.Encoding()) ||
							h.defLen != p.DefinitionLevelByteLen() || h.repLen != p.RepetitionLevelByteLen() || h.valuesCompressed != p.IsCompressed() || h.uncompressed != p.UncompressedSize() {
							t.Fatalf("v2 page: %+v, arrow-go reads %+v", h, p)
						}
					}
				}
				if err := prd.Err(); err != nil {
					t.Fatal(err)
				}
				if len(chunk) != 0 {
					t.Fatalf("%d bytes left in a chunk after its pages", len(chunk))
				}
			}
		}
		pr.Close()
		if pages < 30 {
			t.Fatalf("v%d: %d pages, want many", v+1, pages)
		}
	}
}

// FuzzReadPageHeader: no bytes make readPageHeader panic or claim more
// bytes than it was given.
func FuzzReadPageHeader(f *testing.F) {
	for _, h := range realPageHeaders(f) {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, err := readPageHeader(b)
		if err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("read %d bytes of %d", n, len(b))
		}
	})
}

// chunkBytes is column c of row group g in the file b with footer md,
// from its dictionary page (if any) on.
func chunkBytes(md *metadata.FileMetaData, b []byte, g, c int) []byte {
	cc, _ := md.RowGroup(g).ColumnChunk(c)
	off := cc.DataPageOffset()
	if cc.HasDictionaryPage() {
		off = cc.DictionaryPageOffset()
	}
	return b[off : off+cc.TotalCompressedSize()]
}

package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// Relocator rewrites the files of a table that was copied from the
// directory From to the directory To, so that every path they hold names
// the copy: Iceberg's rewrite_table_path, in place. Metadata files,
// manifest lists, manifests, position delete files (their file_path
// column) and deletion vector files (their blobs' referenced-data-file)
// hold paths; data files do not. Each file is replaced atomically, and a
// file that names nothing under From is left as it is, so a run that
// stopped half way can be run again.
type Relocator struct {
	From, To string // absolute local directories, no trailing slash
}

// RelocateStats counts what a relocation rewrote.
type RelocateStats struct {
	MetadataFiles, ManifestLists, Manifests, DeleteFiles int
}

// posDeletePathField is the field id of a position delete file's file_path.
const posDeletePathField = 2147483546

// MapPath returns s moved from From to To, and whether it was under From
// (as a path or a file:// URI).
func (r Relocator) MapPath(s string) (string, bool) {
	for _, pre := range []string{"", "file://", "file:"} { // file:/x is Hadoop's spelling
		if rest, ok := strings.CutPrefix(s, pre+r.From+"/"); ok {
			return pre + r.To + "/" + rest, true
		}
	}
	return s, false
}

// LocalPath is the file a path, file:///path or file:/path names.
func LocalPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return strings.TrimPrefix(p, "file:")
}

// Table relocates the table whose files lie under dir (in the copy).
func (r Relocator) Table(ctx context.Context, dir string) (RelocateStats, error) {
	var st RelocateStats
	var metas, avros []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		switch {
		case strings.Contains(d.Name(), ".metadata.json"):
			metas = append(metas, p)
		case strings.HasSuffix(d.Name(), ".avro"):
			avros = append(avros, p)
		}
		return ctx.Err()
	})
	if err != nil {
		return st, fmt.Errorf("relocate %s: %w", dir, err)
	}
	// manifests first: they name the delete files, whose sizes change
	var lists []*avroFile
	for _, p := range avros {
		af, err := readAvro(p)
		if err != nil {
			return st, fmt.Errorf("relocate: read %s: %w", p, err)
		}
		if af.field("manifest_path") {
			lists = append(lists, af)
			continue
		}
		if !af.field("data_file") {
			continue // not a manifest: leave it
		}
		n, err := r.deleteFiles(af)
		if err != nil {
			return st, err
		}
		st.DeleteFiles += n
		changed, err := r.manifest(af)
		if err != nil {
			return st, fmt.Errorf("relocate %s: %w", p, err)
		}
		if changed {
			if err := af.write(); err != nil {
				return st, err
			}
			st.Manifests++
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	for _, af := range lists {
		changed := false
		for _, rec := range af.records {
			m, ok := rec.(map[string]any)
			if !ok {
				continue
			}
			if r.replaceAll(m) {
				changed = true
			}
			if p, ok := m["manifest_path"].(string); ok {
				if fi, err := os.Stat(LocalPath(p)); err == nil && m["manifest_length"] != fi.Size() {
					m["manifest_length"] = fi.Size()
					changed = true
				}
			}
		}
		if changed {
			if err := af.write(); err != nil {
				return st, err
			}
			st.ManifestLists++
		}
	}
	for _, p := range metas {
		changed, err := r.metadataFile(p)
		if err != nil {
			return st, fmt.Errorf("relocate %s: %w", p, err)
		}
		if changed {
			st.MetadataFiles++
		}
	}
	return st, nil
}

// manifest rewrites a manifest's paths in memory. A position delete
// file's bounds on file_path are dropped (they may be truncated and then
// cannot be moved; bounds are optional), and its size is taken from the
// file, which deleteFiles may have rewritten.
func (r Relocator) manifest(af *avroFile) (bool, error) {
	changed := false
	for _, rec := range af.records {
		entry, ok := rec.(map[string]any)
		if !ok {
			continue
		}
		df, ok := entry["data_file"].(map[string]any)
		if !ok {
			continue
		}
		if r.replaceAll(df) {
			changed = true
		}
		if content, _ := df["content"].(int32); content != 1 {
			continue
		}
		for _, key := range []string{"lower_bounds", "upper_bounds"} {
			kvs, ok := df[key].([]any)
			if !ok {
				continue
			}
			kept := kvs[:0:0]
			for _, kv := range kvs {
				if m, ok := kv.(map[string]any); ok && m["key"] == int32(posDeletePathField) {
					changed = true
					continue
				}
				kept = append(kept, kv)
			}
			df[key] = kept
		}
		if p, ok := df["file_path"].(string); ok {
			if fi, err := os.Stat(LocalPath(p)); err == nil && df["file_size_in_bytes"] != fi.Size() {
				df["file_size_in_bytes"] = fi.Size()
				changed = true
			}
		}
	}
	return changed, nil
}

// deleteFiles rewrites the position delete files and deletion vector
// files a manifest lists whose contents name paths under From.
func (r Relocator) deleteFiles(af *avroFile) (int, error) {
	n := 0
	for _, rec := range af.records {
		entry, _ := rec.(map[string]any)
		df, _ := entry["data_file"].(map[string]any)
		if content, _ := df["content"].(int32); content != 1 {
			continue
		}
		p, _ := df["file_path"].(string)
		p, _ = r.MapPath(p)
		if _, err := os.Stat(LocalPath(p)); errors.Is(err, fs.ErrNotExist) {
			continue // an entry of a file already deleted
		}
		var changed bool
		var err error
		if strings.EqualFold(fmt.Sprint(df["file_format"]), "PUFFIN") {
			changed, err = r.puffin(LocalPath(p))
		} else {
			changed, err = r.positionDeletes(LocalPath(p))
		}
		if err != nil {
			return n, fmt.Errorf("relocate delete file %s: %w", p, err)
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// replaceAll moves every string under From in v (a decoded Avro record,
// array or map), reporting whether any moved.
func (r Relocator) replaceAll(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				if m, ok := r.MapPath(s); ok {
					x[k] = m
					changed = true
				}
				continue
			}
			if r.replaceAll(e) {
				changed = true
			}
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				if m, ok := r.MapPath(s); ok {
					x[i] = m
					changed = true
				}
				continue
			}
			if r.replaceAll(e) {
				changed = true
			}
		}
	}
	return changed
}

// avroFile is an Avro object container file decoded whole.
type avroFile struct {
	path    string
	schema  *avro.Schema
	meta    map[string][]byte
	records []any
}

func readAvro(p string) (*avroFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := ocf.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	af := &avroFile{path: p, schema: rd.Schema(), meta: map[string][]byte{}}
	for k, v := range rd.Metadata() {
		af.meta[k] = bytes.Clone(v)
	}
	for {
		var v any
		if err := rd.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		af.records = append(af.records, v)
	}
	return af, nil
}

// field reports whether the file's records (or their first level) have a
// field of that name.
func (af *avroFile) field(name string) bool {
	return bytes.Contains(af.meta["avro.schema"], []byte(`"name":"`+name+`"`)) ||
		bytes.Contains(af.meta["avro.schema"], []byte(`"name": "`+name+`"`))
}

// write encodes the records again with the file's schema text, metadata
// and codec, and replaces the file.
func (af *avroFile) write() error {
	user := map[string][]byte{}
	for k, v := range af.meta {
		if !strings.HasPrefix(k, "avro.") {
			user[k] = v
		}
	}
	opts := []ocf.WriterOpt{ocf.WithMetadata(user), ocf.WithSchema(string(af.meta["avro.schema"]))}
	switch codec := string(af.meta["avro.codec"]); codec {
	case "", "null":
	case "deflate":
		opts = append(opts, ocf.WithCodec(ocf.DeflateCodec(-1)))
	case "snappy":
		opts = append(opts, ocf.WithCodec(ocf.SnappyCodec()))
	case "zstandard":
		c, err := ocf.ZstdCodec(nil, nil)
		if err != nil {
			return err
		}
		opts = append(opts, ocf.WithCodec(c))
	default:
		return fmt.Errorf("relocate %s: Avro codec %q", af.path, codec)
	}
	var buf bytes.Buffer
	w, err := ocf.NewWriter(&buf, af.schema, opts...)
	if err != nil {
		return fmt.Errorf("relocate %s: %w", af.path, err)
	}
	for _, rec := range af.records {
		if err := w.Encode(rec); err != nil {
			w.Close()
			return fmt.Errorf("relocate %s: encode: %w", af.path, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("relocate %s: %w", af.path, err)
	}
	return replaceFile(af.path, buf.Bytes())
}

// metadataFile rewrites a table or view metadata file (plain, .gz or
// .zst), moving every string value under From.
func (r Relocator) metadataFile(p string) (bool, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	text, codec, err := decompress(raw)
	if err != nil {
		return false, err
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return false, err
	}
	if !r.replaceAll(doc) {
		return false, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return false, err
	}
	if out, err = recompress(out, codec); err != nil {
		return false, err
	}
	return true, replaceFile(p, out)
}

func decompress(raw []byte) ([]byte, string, error) {
	switch {
	case len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b:
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, "", err
		}
		out, err := io.ReadAll(zr)
		return out, "gzip", err
	case len(raw) > 4 && bytes.Equal(raw[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, "", err
		}
		defer zr.Close()
		out, err := io.ReadAll(zr)
		return out, "zstd", err
	}
	return raw, "", nil
}

func recompress(text []byte, codec string) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(text); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(text); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return text, nil
}

// positionDeletes rewrites a position delete file's file_path column.
func (r Relocator) positionDeletes(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	pr, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return false, err
	}
	codec := compress.Codecs.Zstd
	if pr.NumRowGroups() > 0 && pr.MetaData().RowGroup(0).NumColumns() > 0 {
		if cc, err := pr.MetaData().RowGroup(0).ColumnChunk(0); err == nil {
			codec = cc.Compression()
		}
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		pr.Close()
		return false, err
	}
	tbl, err := fr.ReadTable(context.Background())
	pr.Close()
	if err != nil {
		return false, err
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("file_path")
	if len(idx) != 1 {
		return false, fmt.Errorf("no file_path column")
	}
	col := tbl.Column(idx[0])
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	changed := false
	for _, chunk := range col.Data().Chunks() {
		s, ok := chunk.(*array.String)
		if !ok {
			return false, fmt.Errorf("file_path is %s, not a string", chunk.DataType())
		}
		for i := 0; i < s.Len(); i++ {
			if s.IsNull(i) {
				b.AppendNull()
				continue
			}
			m, ok := r.MapPath(s.Value(i))
			changed = changed || ok
			b.Append(m)
		}
	}
	if !changed {
		return false, nil
	}
	paths := b.NewArray()
	defer paths.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		if i == idx[0] {
			cols[i] = paths
			continue
		}
		c := tbl.Column(i).Data()
		if len(c.Chunks()) == 1 {
			cols[i] = c.Chunk(0)
			continue
		}
		merged, err := array.Concatenate(c.Chunks(), memory.DefaultAllocator)
		if err != nil {
			return false, err
		}
		defer merged.Release()
		cols[i] = merged
	}
	rec := array.NewRecordBatch(tbl.Schema(), cols, int64(paths.Len()))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(tbl.Schema(), &buf, parquet.NewWriterProperties(parquet.WithCompression(codec)), pqarrow.DefaultWriterProps())
	if err != nil {
		return false, err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return false, err
	}
	if err := w.Close(); err != nil {
		return false, err
	}
	return true, replaceFile(p, buf.Bytes())
}

// puffin rewrites the footer of a Puffin file (deletion vectors): the
// blobs' referenced-data-file properties. The blobs keep their offsets.
func (r Relocator) puffin(p string) (bool, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	magic := []byte{'P', 'F', 'A', '1'}
	n := len(raw)
	if n < 16 || !bytes.Equal(raw[n-4:], magic) || !bytes.Equal(raw[:4], magic) {
		return false, fmt.Errorf("not a Puffin file")
	}
	flags := raw[n-8 : n-4]
	if flags[0]&1 != 0 {
		return false, fmt.Errorf("a compressed Puffin footer is not supported")
	}
	size := int(binary.LittleEndian.Uint32(raw[n-12 : n-8]))
	start := n - 12 - size
	if size < 0 || start < 8 || !bytes.Equal(raw[start-4:start], magic) {
		return false, fmt.Errorf("bad Puffin footer")
	}
	dec := json.NewDecoder(bytes.NewReader(raw[start : n-12]))
	dec.UseNumber()
	var footer any
	if err := dec.Decode(&footer); err != nil {
		return false, err
	}
	if !r.replaceAll(footer) {
		return false, nil
	}
	payload, err := json.Marshal(footer)
	if err != nil {
		return false, err
	}
	out := append(bytes.Clone(raw[:start]), payload...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	out = append(out, flags...)
	out = append(out, magic...)
	return true, replaceFile(p, out)
}

// replaceFile writes p atomically and durably: a synced temporary file
// renamed over it.
func replaceFile(p string, content []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("relocate: write %s: %w", p, err)
	}
	if d, err := os.Open(filepath.Dir(p)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

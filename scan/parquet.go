package scan

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// OpenParquet opens every Parquet file matching glob (a path or a pattern
// such as dir/*.parquet) and streams their rows. All files must share one
// schema.
func OpenParquet(ctx context.Context, glob string) (array.RecordReader, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("read parquet %s: bad pattern: %w", glob, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("read parquet %s: no file matches", glob)
	}
	sort.Strings(paths)
	pr := &parquetReader{ctx: ctx, paths: paths}
	pr.refs = 1
	if err := pr.open(0); err != nil {
		return nil, err
	}
	pr.schema = pr.rr.Schema()
	return pr, nil
}

type parquetReader struct {
	refs   int64
	ctx    context.Context
	paths  []string
	idx    int
	f      *file.Reader
	rr     pqarrow.RecordReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

func (p *parquetReader) open(i int) error {
	f, err := file.OpenParquetFile(p.paths[i], false)
	if err != nil {
		return fmt.Errorf("read parquet %s: %w", p.paths[i], err)
	}
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 65_536, Parallel: true}, memory.DefaultAllocator)
	if err != nil {
		f.Close()
		return fmt.Errorf("read parquet %s: %w", p.paths[i], err)
	}
	rr, err := fr.GetRecordReader(p.ctx, nil, nil)
	if err != nil {
		f.Close()
		return fmt.Errorf("read parquet %s: %w", p.paths[i], err)
	}
	if p.schema != nil && !p.schema.Equal(rr.Schema()) {
		rr.Release()
		f.Close()
		return fmt.Errorf("read parquet %s: its schema differs from %s's; read files of one schema at a time", p.paths[i], p.paths[0])
	}
	p.f, p.rr, p.idx = f, rr, i
	return nil
}

func (p *parquetReader) closeCurrent() {
	if p.rr != nil {
		p.rr.Release()
		p.rr = nil
	}
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

func (p *parquetReader) Retain()               { p.refs++ }
func (p *parquetReader) Schema() *arrow.Schema { return p.schema }
func (p *parquetReader) Err() error            { return p.err }

func (p *parquetReader) RecordBatch() arrow.RecordBatch { return p.cur }

// Files reports how many of the matched files have been read to their
// end, for progress bars (FileCounter).
func (p *parquetReader) Files() (done, total int) {
	if p.rr == nil {
		return len(p.paths), len(p.paths)
	}
	return p.idx, len(p.paths)
}

// Record is RecordBatch under its deprecated name.
func (p *parquetReader) Record() arrow.RecordBatch { return p.cur }

func (p *parquetReader) Release() {
	p.refs--
	if p.refs == 0 {
		if p.cur != nil {
			p.cur.Release()
			p.cur = nil
		}
		p.closeCurrent()
	}
}

func (p *parquetReader) Next() bool {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	for p.err == nil && p.rr != nil {
		if err := p.ctx.Err(); err != nil {
			p.err = err
			return false
		}
		if p.rr.Next() {
			rec := p.rr.RecordBatch()
			if rec.NumRows() == 0 {
				continue
			}
			if err := checkUTF8(rec); err != nil {
				p.err = fmt.Errorf("read parquet %s: %w", p.paths[p.idx], err)
				return false
			}
			rec.Retain()
			p.cur = rec
			return true
		}
		if err := p.rr.Err(); err != nil {
			p.err = fmt.Errorf("read parquet %s: %w", p.paths[p.idx], err)
			return false
		}
		p.closeCurrent()
		if p.idx+1 >= len(p.paths) {
			return false
		}
		if err := p.open(p.idx + 1); err != nil {
			p.err = err
			return false
		}
	}
	return false
}

var _ array.RecordReader = (*parquetReader)(nil)

// checkUTF8 refuses a batch whose text columns hold bytes that are not
// UTF-8, as PostgreSQL does (22021): a Parquet file from another writer
// may carry them in a STRING column, and skade would store them in TEXT.
func checkUTF8(rec arrow.RecordBatch) error {
	for i, c := range rec.Columns() {
		s, ok := c.(*array.String)
		if !ok || s.Len() == 0 {
			continue
		}
		if data := s.ValueBytes(); utf8.Valid(data) {
			// the common case, in one pass: valid as a whole, and no
			// value starts inside another's character
			split := false
			for r := 1; r < s.Len() && !split; r++ {
				if off := s.ValueOffset(r) - s.ValueOffset(0); off < len(data) && data[off]&0xC0 == 0x80 {
					split = true
				}
			}
			if !split {
				continue
			}
		}
		for r := 0; r < s.Len(); r++ {
			if s.IsValid(r) && !utf8.ValidString(s.Value(r)) {
				return fmt.Errorf("column %q, row %d of the batch: invalid byte sequence for encoding \"UTF8\"", rec.Schema().Field(i).Name, r+1)
			}
		}
	}
	return nil
}

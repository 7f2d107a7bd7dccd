package scan

import (
	"context"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Reads that stop when their query does. iceberg-go reads a task's row
// groups through arrow-go's record reader, which does not look at the
// context between batches, and its scan waits for every task being read
// before it lets go: a query closed early (a LIMIT met, a client that
// closes its cursor) went on decoding the ranges its workers had begun.
// `SELECT * FROM t LIMIT 10` over one 10M-row file took 0.3 s, most of it
// in closing. A query's scan therefore reads through an IO bound to the
// context iceberg-go hands the table's IO function, that of the read:
// once it is done, opening a file and reading from one fail with the
// context's error, and the reader stops at its next column chunk.

// cancellable returns tbl with its IO function wrapped so (see above).
// It keeps tbl's identifier, metadata and IO but not its catalog: it is
// for reading planned tasks, not for planning or commits.
func cancellable(tbl *table.Table) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return ctxIO{IO: fsys, ctx: ctx}, nil
	}, nil)
}

// ctxIO is an IO whose files stop reading once ctx is done.
type ctxIO struct {
	iceio.IO
	ctx context.Context
}

func (c ctxIO) Open(name string) (iceio.File, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	f, err := c.IO.Open(name)
	if err != nil {
		return nil, err
	}
	return &ctxFile{File: f, ctx: c.ctx}, nil
}

// ctxFile is a file of a ctxIO.
type ctxFile struct {
	iceio.File
	ctx context.Context
}

func (f *ctxFile) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *ctxFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

package lake

import (
	"context"
	"sync"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/snapshot"
)

// Progress counts how far the statements running under a context have
// got, for a progress bar: FilesTotal is the data files their scans,
// rewrites, compactions and file reads (COPY FROM, read_csv,
// read_parquet) have planned so far, FilesDone those finished, and Rows
// the rows read. Every counter only grows, and FilesTotal can grow while
// a statement runs (each scan plans when it opens), so FilesDone of
// FilesTotal is a fraction of what is known so far. Read the counters
// with Load from any goroutine.
//
//	var p lake.Progress
//	ctx := lake.WithProgress(ctx, &p)
//	go func() { /* draw p.FilesDone.Load() of p.FilesTotal.Load() */ }()
//	res, err := sess.SQL(ctx, "MERGE INTO ...")
//
// A query's scans report as its result is read, into the Progress of the
// context given to SQL.
type Progress = exec.Progress

// WithProgress returns a context whose statements report into p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return exec.WithProgress(ctx, p)
}

// progressIO counts the data files iceberg-go reads through it into p,
// for work that skade hands to iceberg-go whole (compaction): a file is
// planned up front and done when its reader is closed, and then its rows
// count as read.
type progressIO struct {
	snapshot.IdempotentRemove
	p *exec.Progress

	mu sync.Mutex
	// rows holds the files still to be read, with their row counts;
	// a file leaves it when done, so a second read is not counted.
	rows map[string]int64
}

// newProgressIO plans files (path to row count) in p and counts them as
// they are read through fsys. With no p it returns fsys itself.
func newProgressIO(fsys snapshot.IdempotentRemove, p *exec.Progress, files map[string]int64) iceio.IO {
	if p == nil || len(files) == 0 {
		return fsys
	}
	p.Planned(int64(len(files)))
	for _, n := range files {
		p.PlannedRows(n)
	}
	return &progressIO{IdempotentRemove: fsys, p: p, rows: files}
}

func (o *progressIO) Open(name string) (iceio.File, error) {
	f, err := o.IdempotentRemove.Open(name)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	_, ok := o.rows[name]
	o.mu.Unlock()
	if !ok {
		return f, nil
	}
	return &progressFile{File: f, io: o, name: name}, nil
}

func (o *progressIO) done(name string) {
	o.mu.Lock()
	n, ok := o.rows[name]
	delete(o.rows, name)
	o.mu.Unlock()
	if ok {
		o.p.AddRows(n)
		o.p.FileDone()
	}
}

// progressFile counts its file done when it is closed.
type progressFile struct {
	iceio.File
	io   *progressIO
	name string
}

func (f *progressFile) Close() error {
	err := f.File.Close()
	f.io.done(f.name)
	return err
}

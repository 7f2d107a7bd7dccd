package exec

import (
	"context"
	"sync/atomic"

	"github.com/skadedb/skade/scan"
)

// Progress counts the work of a running statement, for a progress bar:
// every table scan, file import and rewrite running under a context that
// carries a Progress adds to it. The counters only grow; read them from
// any goroutine.
type Progress struct {
	// FilesTotal is the number of data files the statement's scans and
	// rewrites have planned so far; FilesDone those finished.
	FilesTotal, FilesDone atomic.Int64
	// Rows is the number of rows read so far.
	Rows atomic.Int64
	// RowsTotal is how many rows the work planned so far will read, where
	// that is known (the record counts of planned data files, a series'
	// length): against Rows it gives a fraction finer than files.
	RowsTotal atomic.Int64
	// Bytes and BytesTotal are the bytes read of input files whose rows
	// are not known in advance (CSV), and their sizes.
	Bytes, BytesTotal atomic.Int64
}

type progressKey struct{}

// WithProgress returns a context whose statements report into p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress ctx carries, or nil.
func ProgressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

// Planned adds n planned files; nil-safe.
func (p *Progress) Planned(n int64) {
	if p != nil {
		p.FilesTotal.Add(n)
	}
}

// PlannedRows adds n rows to be read; nil-safe.
func (p *Progress) PlannedRows(n int64) {
	if p != nil && n > 0 {
		p.RowsTotal.Add(n)
	}
}

// AddBytes counts n bytes of input read and total more planned; nil-safe.
func (p *Progress) AddBytes(n, total int64) {
	if p != nil {
		p.Bytes.Add(n)
		p.BytesTotal.Add(total)
	}
}

// FileDone counts one finished file; nil-safe.
func (p *Progress) FileDone() {
	if p != nil {
		p.FilesDone.Add(1)
	}
}

// AddRows counts n rows read; nil-safe.
func (p *Progress) AddRows(n int64) {
	if p != nil {
		p.Rows.Add(n)
	}
}

// InputProgress reports a file reader's progress (its scan.FileCounter
// and scan.ByteCounter, when it has them) into a Progress: Plan once
// when the reader opens, Report after each batch. The zero value is
// ready; read_csv's source and the import command share it.
type InputProgress struct {
	files int   // files reported done
	bytes int64 // bytes reported read
}

// Plan reports rdr's files and bytes as planned work.
func (in *InputProgress) Plan(rdr any, p *Progress) {
	*in = InputProgress{}
	if fc, ok := rdr.(scan.FileCounter); ok {
		_, total := fc.Files()
		p.Planned(int64(total))
	}
	if bc, ok := rdr.(scan.ByteCounter); ok {
		_, total := bc.Bytes()
		p.AddBytes(0, total)
	}
}

// Report reports rows read, and the bytes read and files finished since
// the last call.
func (in *InputProgress) Report(rdr any, p *Progress, rows int64) {
	p.AddRows(rows)
	if bc, ok := rdr.(scan.ByteCounter); ok {
		read, _ := bc.Bytes()
		p.AddBytes(read-in.bytes, 0)
		in.bytes = read
	}
	if fc, ok := rdr.(scan.FileCounter); ok {
		done, _ := fc.Files()
		for ; in.files < done; in.files++ {
			p.FileDone()
		}
	}
}

package scan

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// CSVReject is one CSV row read with IgnoreErrors that could not be read:
// a ragged row, a malformed quote, or a value its column's type does not
// parse.
type CSVReject struct {
	File   string
	Line   int
	Column string // "" when the whole row is at fault
	Value  string
	Error  string
}

// CSVRejects collects the rejected rows of one statement's CSV reads. It
// is safe for concurrent use.
type CSVRejects struct {
	mu   sync.Mutex
	stmt int64
	rows []CSVReject
}

// Rows returns a copy of the rows rejected so far, by file and line.
func (r *CSVRejects) Rows() []CSVReject {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]CSVReject(nil), r.rows...)
	slices.SortStableFunc(out, func(a, b CSVReject) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

// Begin starts statement stmt's rejects: those of an earlier statement
// are dropped, so the collection holds the latest statement's.
func (r *CSVRejects) Begin(stmt int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stmt != stmt {
		r.stmt, r.rows = stmt, nil
	}
}

func (r *CSVRejects) add(rej CSVReject) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, rej)
}

type rejectsKey struct{}

type rejectsCtx struct {
	r    *CSVRejects
	stmt int64
}

// WithCSVRejects returns ctx whose CSV reads with IgnoreErrors record
// their rejected rows in r, as statement stmt's.
func WithCSVRejects(ctx context.Context, r *CSVRejects, stmt int64) context.Context {
	return context.WithValue(ctx, rejectsKey{}, rejectsCtx{r, stmt})
}

// CSVRejectsFrom returns the collection ctx carries and its statement.
func CSVRejectsFrom(ctx context.Context) (*CSVRejects, int64) {
	rc, _ := ctx.Value(rejectsKey{}).(rejectsCtx)
	return rc.r, rc.stmt
}

package mergeinto

import (
	"context"
)

// The early insert. The source rows whose key lies outside the target's
// key range (keyrange.go) can match no target row, so they are known to
// be unmatched as soon as the join table is built. A goroutine applies
// the NOT MATCHED clauses to them and writes the inserted rows while the
// target is read, instead of after it: the new rows' encoding and
// compression use the cores the scan leaves idle. The insert phase then
// takes the remaining unmatched rows and writes them to the same writers,
// so the statement writes as many files as it did.
//
// It runs only where the order of the work cannot show: not with
// RETURNING (whose rows it would interleave) and not on a table with a
// sort order (whose inserts are sorted together).
//
// INVARIANT: the early goroutine reads the source's columns and the
// clauses' expressions, and writes only its own writers and counter;
// the merger waits for it (insertUnmatched, or stopEarlyInsert on
// failure) before reading them or stopping the writers.

// earlyInsert is one early insert's goroutine and outcome.
type earlyInsert struct {
	cancel   context.CancelFunc
	done     chan struct{}
	ws       []*fileWriter // its writers (nil where unused)
	inserted int64         // rows inserted, read after done
	err      error         // read after done
}

// wait waits for the goroutine to finish.
func (e *earlyInsert) wait() {
	<-e.done
	e.cancel()
}

// startEarlyInsert starts the early insert when the build left rows out
// of the join table and the statement allows it.
func (m *merger) startEarlyInsert(ctx context.Context) {
	jb := m.src
	if jb == nil || jb.Table == nil || jb.OutOfRange == 0 || len(m.p.notMatched) == 0 || m.spec.Returning != nil {
		return
	}
	if len(m.insertSortKeys()) > 0 {
		return
	}
	// The insert phase must leave these rows: they count as matched from
	// here on (no probe can reach them, since the table lacks them).
	var idx []int32
	for from := int32(0); ; {
		if idx, from = jb.AppendOutOfRange(idx[:0], from, 4096); len(idx) == 0 {
			break
		}
		for _, r := range idx {
			jb.Table.SetMatched(r)
		}
	}
	n := jb.OutOfRange
	ectx, cancel := context.WithCancel(ctx)
	e := &earlyInsert{cancel: cancel, done: make(chan struct{}), ws: make([]*fileWriter, insertWriters(n))}
	m.early = e
	next := func(dst []int32, from int32) ([]int32, int32) {
		return jb.AppendOutOfRange(dst, from, m.opts.BatchSize)
	}
	go func() {
		defer close(e.done)
		e.err = recovered(func() error { return m.pushInserts(ectx, ctx, next, n, e.ws, &e.inserted) })
	}()
}

// stopEarlyInsert stops an early insert still running (the statement
// failed before its insert phase) and waits for it; its writers are
// among m.writers, which abort stops.
func (m *merger) stopEarlyInsert() {
	if e := m.early; e != nil {
		m.early = nil
		e.cancel()
		<-e.done
	}
}

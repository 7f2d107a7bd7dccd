package lake

import "github.com/skadedb/skade/exec"

// Progress is how far a running query has got, from its table scans'
// counters: what a progress bar can show while the result streams.
type Progress struct {
	// FilesPlanned is the number of data files the scans will read, known
	// once they have planned; FilesSkipped those that pruning left out.
	FilesPlanned, FilesSkipped int64
	// RowsScanned is the number of rows the scans have produced so far.
	RowsScanned int64
}

// Progress reports the scans' counters. It is safe to call from another
// goroutine while the result is being read; a materialized result (DML's
// count, SHOW, EXPLAIN) reports nothing.
func (r *Result) Progress() Progress {
	var p Progress
	if r.op == nil {
		return p
	}
	var walk func(op exec.Operator)
	walk = func(op exec.Operator) {
		if s, ok := op.(*exec.TableScan); ok {
			m := s.Metrics()
			x := m.Extra()
			p.FilesPlanned += x["files_scanned"]
			p.FilesSkipped += x["files_skipped"]
			p.RowsScanned += m.RowsOut.Load()
		}
		for _, c := range op.Children() {
			walk(c)
		}
	}
	walk(r.op)
	return p
}

package plan

import (
	"runtime"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	skscan "github.com/skadedb/skade/scan"
)

// parallel builds (with Options.ParallelScans) a streaming chain (Filters and Projects over one table
// Scan) as several copies, each scanning its share of the data files,
// under an Exchange that runs them in parallel. ok is false when n is not
// such a chain, the machine has one core, or the scan plans fewer than two
// files.
func (b *binder) parallel(n Node) (exec.Operator, bool, error) {
	if b.split != nil || !b.opts.ParallelScans {
		return nil, false, nil
	}
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return nil, false, nil
	}
	scan := chainScan(n)
	if scan == nil || scan.Snap == nil {
		return nil, false, nil
	}
	fields, schema := scanFields(scan)
	probe, err := exec.NewTableScan(scan.Table.Name, scan.Table.Table, scan.Snap, fields, schema, scan.Pushed)
	if err != nil {
		return nil, false, err
	}
	tasks, err := probe.Tasks(b.ctx)
	if err != nil {
		return nil, false, err
	}
	if len(tasks) < 2 {
		return nil, false, nil
	}
	workers = min(workers, len(tasks))
	// deal tasks (a file, or one split of a large one) largest first to
	// the least loaded worker
	size := skscan.TaskBytes
	slices.SortFunc(tasks, func(x, y table.FileScanTask) int {
		return int(size(y) - size(x))
	})
	parts := make([][]table.FileScanTask, workers)
	load := make([]int64, workers)
	for _, t := range tasks {
		i := slices.Index(load, slices.Min(load))
		parts[i] = append(parts[i], t)
		load[i] += size(t)
	}
	var inputs []exec.Operator
	closeAll := func() {
		for _, in := range inputs {
			in.Close()
		}
	}
	for _, p := range parts {
		b.split = p
		op, err := b.buildSerial(n)
		b.split = nil
		if err != nil {
			closeAll()
			return nil, false, err
		}
		inputs = append(inputs, op)
	}
	ex, err := exec.NewExchange(inputs...)
	if err != nil {
		closeAll()
		return nil, false, err
	}
	total := skscan.SnapshotDataFiles(scan.Table.Table, scan.Snap.SnapshotID)
	ex.Metrics().Set("files_scanned", int64(len(tasks)))
	if total >= int64(len(tasks)) {
		ex.Metrics().Set("files_skipped", total-int64(len(tasks)))
	}
	return ex, true, nil
}

// chainScan returns the Scan under a chain of Filters and Projects, or
// nil.
func chainScan(n Node) *Scan {
	for {
		switch x := n.(type) {
		case *Scan:
			return x
		case *Filter:
			n = x.Input
		case *Project:
			n = x.Input
		default:
			return nil
		}
	}
}

// buildChainInput builds the input of a Filter or Project: the rest of a
// scan chain is built serially (its top tried to split it), anything else
// as usual.
func (b *binder) buildChainInput(n Node) (exec.Operator, error) {
	if b.split != nil || chainScan(n) != nil {
		// the chain's top already decided whether to split it
		return b.buildSerial(n)
	}
	return b.build(n)
}

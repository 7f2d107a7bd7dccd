package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/skadedb/skade/lake"
)

func init() {
	var targetMiB int64
	register(&command{
		name:    "compact",
		args:    "TABLE",
		summary: "rewrite small files, files carrying deletes, and files whose partition tuple disagrees with their rows, into target-size files, folding the deletes in",
		example: "skade compact events\nskade compact events --target-mib 64",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&targetMiB, "target-mib", 0, "size of the files to write, in MiB (0: the table's write.target-file-size-bytes)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usagef("needs one table name")
			}
			if targetMiB < 0 {
				return usagef("--target-mib: %d is negative; give a size in MiB, or 0 for the table's default", targetMiB)
			}
			lk, tbl, err := e.table(ctx, args[0])
			if err != nil {
				return err
			}
			defer lk.Close()
			bar := e.terminalProgress()
			out, res, err := tbl.Compact(bar.context(ctx), lake.CompactOptions{TargetFileSizeBytes: targetMiB << 20})
			bar.stop()
			if err != nil {
				return err
			}
			if res == (lake.CompactResult{}) {
				fmt.Fprintf(e.stdout, "%s needs no compaction; nothing was written\n", tbl.Name())
				return nil
			}
			fmt.Fprintf(e.stdout, "compacted %s: rewrote %d data files (%d bytes) into %d (%d bytes), removed %d delete files (snapshot %d)%s\n",
				tbl.Name(), res.RewrittenDataFiles, res.BytesBefore, res.AddedDataFiles, res.BytesAfter, res.RemovedDeleteFiles, out.Snapshot().ID, res.MislabeledNote())
			return nil
		},
	})
}

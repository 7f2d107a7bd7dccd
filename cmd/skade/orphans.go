package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

func init() {
	var olderThan string
	register(&command{
		name:    "orphans",
		args:    "TABLE",
		summary: "delete files in a table's directory that no snapshot references",
		example: "skade orphans events --older-than 3d",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&olderThan, "older-than", "3d", "only delete files older than this, so that writes in flight are safe")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usagef("needs one table name")
			}
			age, err := parseAge(olderThan)
			if err != nil {
				return usagef("--older-than: %v", err)
			}
			lk, tbl, err := e.table(ctx, args[0])
			if err != nil {
				return err
			}
			defer lk.Close()
			res, err := tbl.RemoveOrphanFiles(ctx, time.Now().Add(-age))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "deleted %d orphan files (%d bytes) from %s\n", len(res.DeletedFiles), res.DeletedBytes, tbl.Name())
			return nil
		},
	})
}

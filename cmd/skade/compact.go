package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(&command{
		name:    "compact",
		args:    "TABLE",
		summary: "rewrite a table's small files into larger ones (not implemented yet)",
		example: "skade compact events",
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usagef("needs one table name")
			}
			lk, err := e.open(ctx)
			if err != nil {
				return err
			}
			defer lk.Close()
			tbl, err := lk.Table(ctx, args[0])
			if err != nil {
				return err
			}
			// The lake has no compaction yet; say so rather than do nothing.
			return fmt.Errorf("compact %s: not implemented yet; the lake has no compaction (file rewrite) API, so the table is unchanged", tbl.Name())
		},
	})
}

package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/skadedb/skade/lake"
)

func init() {
	var olderThan string
	var force bool
	register(&command{
		name:    "orphans",
		args:    "[TABLE]",
		summary: "delete files no snapshot references: in a table's directory, or, without TABLE, anywhere in the lake",
		example: "skade orphans events --older-than 3d",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&olderThan, "older-than", "3d", "only delete files older than this, so that writes in flight are safe")
			fs.BoolVar(&force, "force", false, "also clean table directories that hold metadata of a table the catalog does not name")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) > 1 {
				return usagef("takes at most one table name")
			}
			age, err := parseAge(olderThan)
			if err != nil {
				return usagef("--older-than: %v", err)
			}
			if len(args) == 0 {
				return orphansEverywhere(ctx, e, time.Now().Add(-age), force)
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

// orphansEverywhere cleans every table's directory, then what lies
// outside them: directories of dropped tables whose files no clone needs
// any more, and of tables whose creating transaction never committed.
func orphansEverywhere(ctx context.Context, e *env, olderThan time.Time, force bool) error {
	lk, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer lk.Close()
	names, err := lk.Tables(ctx)
	if err != nil {
		return err
	}
	var files, bytes int64
	for _, n := range names {
		tbl, err := lk.Table(ctx, n)
		if err != nil {
			return err
		}
		res, err := tbl.RemoveOrphanFiles(ctx, olderThan)
		if err != nil {
			return err
		}
		files, bytes = files+int64(len(res.DeletedFiles)), bytes+res.DeletedBytes
	}
	var opts []lake.OrphanOption
	if force {
		opts = append(opts, lake.ForceTableDirs())
	}
	res, err := lk.RemoveOrphanTableDirs(ctx, olderThan, opts...)
	if err != nil {
		return err
	}
	for _, d := range res.Kept {
		fmt.Fprintf(e.stderr, "kept %s: it holds metadata of a table the catalog does not name; `skade repair` brings it back, --force deletes its unreferenced files\n", d)
	}
	files, bytes = files+int64(len(res.DeletedFiles)), bytes+res.DeletedBytes
	fmt.Fprintf(e.stdout, "deleted %d orphan files (%d bytes) from the lake (%d tables)\n", files, bytes, len(names))
	return nil
}

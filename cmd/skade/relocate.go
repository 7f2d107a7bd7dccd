package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	var from string
	register(&command{
		name:    "relocate",
		summary: "make a lake directory copied from elsewhere self-contained: rewrite the paths its metadata holds to name this directory",
		example: "skade relocate --lake /backup/lake   # after cp -a /data/lake /backup/lake",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&from, "from", "", "the directory the lake was copied from; found from the catalog when not given")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 0 {
				return usagef("takes no arguments")
			}
			lk, err := e.open(ctx)
			if err != nil {
				return err
			}
			defer lk.Close()
			res, err := lk.Relocate(ctx, from)
			if err != nil {
				return err
			}
			if res.From == "" {
				fmt.Fprintln(e.stdout, "every table's files are already in this lake; nothing to do")
				return nil
			}
			fmt.Fprintf(e.stdout, "relocated %d tables and %d views from %s: rewrote %d metadata files, %d manifest lists, %d manifests and %d delete files\n",
				res.Tables, res.Views, res.From, res.MetadataFiles, res.ManifestLists, res.Manifests, res.DeleteFiles)
			return nil
		},
	})
}

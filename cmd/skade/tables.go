package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(&command{
		name:    "tables",
		summary: "list the tables in the lake",
		example: "skade --lake ./skade-lake tables",
		run:     runTables,
	})
}

func runTables(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) != 0 {
		return usagef("takes no arguments, got %q", args)
	}
	lk, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer lk.Close()
	names, err := lk.Tables(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(e.stdout, n)
	}
	return nil
}

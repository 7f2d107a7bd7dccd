package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(&command{
		name:    "metadata",
		args:    "TABLE",
		summary: "print the location of a table's current metadata file, for other Iceberg readers",
		example: "skade metadata events",
		run:     runMetadata,
	})
}

// runMetadata prints the table's current metadata file: what another
// engine's Iceberg reader (iceberg_scan, pyiceberg's StaticTable, Spark's
// register_table) needs to read the table without the catalog.
func runMetadata(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) != 1 {
		return usagef("needs one table name")
	}
	lk, tbl, err := e.table(ctx, args[0])
	if err != nil {
		return err
	}
	defer lk.Close()
	fmt.Fprintln(e.stdout, tbl.Iceberg().MetadataLocation())
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/skadedb/skade/lake"
)

func init() {
	register(&command{
		name:    "history",
		args:    "TABLE",
		summary: "list a table's snapshots, oldest first, with what each commit did",
		example: "skade history events",
		run:     runHistory,
	})
}

func runHistory(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) != 1 {
		return usagef("needs one table name")
	}
	lk, tbl, err := e.table(ctx, args[0])
	if err != nil {
		return err
	}
	defer lk.Close()
	header, rows := historyRows(tbl)
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "table %s has no snapshots yet\n", tbl.Name())
		return nil
	}
	printTable(e.stdout, header, rows)
	return nil
}

// historyRows is a table's snapshots, oldest first, as text: the history
// subcommand and the shell's .history print them. The current snapshot's
// id is starred.
func historyRows(tbl *lake.Table) (header []string, rows [][]string) {
	header = []string{"snapshot", "committed_at", "operation", "parent", "added_rows", "deleted_rows", "total_rows", "data_files"}
	for _, s := range tbl.History() {
		parent := ""
		if s.ParentID != nil {
			parent = strconv.FormatInt(*s.ParentID, 10)
		}
		cur := ""
		if s.Current {
			cur = "*"
		}
		rows = append(rows, []string{
			strconv.FormatInt(s.ID, 10) + cur,
			s.Committed.Format(time.RFC3339Nano),
			s.Operation,
			parent,
			summaryCount(s.Summary, "added-records"),
			summaryCount(s.Summary, "deleted-records"),
			summaryCount(s.Summary, "total-records"),
			summaryCount(s.Summary, "total-data-files"),
		})
	}
	return header, rows
}

func summaryCount(m map[string]string, key string) string {
	if v, ok := m[key]; ok {
		return v
	}
	return "0"
}

package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

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
	header, rows, err := historyRows(ctx, tbl)
	if err != nil {
		return err
	}
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
func historyRows(ctx context.Context, tbl *lake.Table) (header []string, rows [][]string, err error) {
	header = []string{"snapshot", "committed_at", "operation", "parent", "added_rows", "deleted_rows", "total_rows", "data_files"}
	hist, err := tbl.History(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range hist {
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
			timestamptzText(s.Committed),
			s.Operation,
			parent,
			summaryCount(s.Summary, "added-records"),
			summaryCount(s.Summary, "deleted-records"),
			summaryCount(s.Summary, "total-records"),
			summaryCount(s.Summary, "total-data-files"),
		})
	}
	return header, rows, nil
}

// timestamptzText renders t as the engine casts a timestamptz to text,
// so that .history and `SELECT committed_at FROM t$snapshots` agree.
func timestamptzText(t time.Time) string {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer b.Release()
	b.Append(arrow.Timestamp(t.UnixMicro()))
	a := b.NewArray()
	defer a.Release()
	cells, err := columnText(context.Background(), a)
	if err != nil || len(cells) != 1 {
		return t.UTC().Format("2006-01-02 15:04:05.999999-07")
	}
	return cells[0].text
}

func summaryCount(m map[string]string, key string) string {
	if v, ok := m[key]; ok {
		return v
	}
	return "0"
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/scan"
)

func init() {
	var partitionBy string
	register(&command{
		name:    "import",
		args:    "TABLE FILE.csv|FILE.parquet",
		summary: "append a CSV or Parquet file to a table, creating the table if it is absent",
		example: "skade import events testdata/events.csv\nskade import --partition-by 'day(ts)' events data/*.parquet",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&partitionBy, "partition-by", "", "when creating the table, partition it by these fields (e.g. 'day(ts), bucket(16, id)')")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			return runImport(ctx, e, args, partitionBy)
		},
	})
}

func runImport(ctx context.Context, e *env, args []string, partitionBy string) error {
	if len(args) != 2 {
		return usagef("needs a table name and a file")
	}
	name, path := args[0], args[1]
	lk, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer lk.Close()

	tbl, err := lk.Table(ctx, name)
	created := false
	switch {
	case errors.Is(err, lake.ErrTableNotFound):
	case err != nil:
		return err
	}

	var rdr array.RecordReader
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv", ".tsv", ".txt":
		opts := scan.DefaultCSVOptions()
		if ext == ".tsv" {
			opts.Delimiter = '\t'
		}
		if tbl != nil {
			opts.Schema = tbl.Schema()
		}
		rdr, err = scan.OpenCSV(path, opts)
	case ".parquet", ".pq":
		rdr, err = scan.OpenParquet(ctx, path)
	default:
		return usagef("cannot tell the format of %q; name a .csv, .tsv or .parquet file", path)
	}
	if err != nil {
		return err
	}
	defer rdr.Release()

	if tbl == nil {
		var opts []lake.TableOption
		if partitionBy != "" {
			opts = append(opts, lake.PartitionBy(splitTopLevel(partitionBy)...))
		}
		tbl, err = lk.CreateTable(ctx, name, nullable(rdr.Schema()), opts...)
		if err != nil {
			return err
		}
		created = true
	}
	counted := &countingReader{RecordReader: rdr}
	if isTerminal(e.stdout) && isTerminal(e.stderr) {
		counted.bar = startProgress(e.stderr)
	}
	out, err := tbl.Append(ctx, counted)
	counted.bar.stop()
	if err != nil {
		if created {
			// Leave no empty table behind from a failed first import.
			if derr := lk.DropTable(context.WithoutCancel(ctx), name, true); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		return err
	}
	verb := "appended"
	if created {
		verb = "created " + out.Name() + " and appended"
	}
	fmt.Fprintf(e.stdout, "%s %d rows to %s (snapshot %d)\n", verb, counted.rows, out.Name(), out.Snapshot().ID)
	return nil
}

// nullable marks every column nullable: a file's schema says nothing
// about what later rows may hold.
func nullable(s *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		f.Nullable = true
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil)
}

// splitTopLevel splits on commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// countingReader counts the rows read through it, for the message and
// the progress bar (nil when the output is not a terminal).
type countingReader struct {
	array.RecordReader
	rows int64
	bar  *progressBar
}

func (c *countingReader) Next() bool {
	if !c.RecordReader.Next() {
		return false
	}
	c.rows += c.RecordReader.RecordBatch().NumRows()
	c.bar.rows(c.rows)
	return true
}

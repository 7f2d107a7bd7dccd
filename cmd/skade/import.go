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

	"github.com/skadedb/skade/exec"
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
	lk, err := e.create(ctx)
	if err != nil {
		return err
	}
	defer lk.Close()
	bar := e.terminalProgress()
	msg, err := importFile(ctx, lk, args[0], args[1], partitionBy, bar.progress())
	bar.stop()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, msg)
	return nil
}

// importFile appends the CSV or Parquet file at path to table name,
// creating the table (partitioned by partitionBy) when it is absent, and
// says what it did. The shell's .import runs it too.
func importFile(ctx context.Context, lk *lake.Lake, name, path, partitionBy string, progress *lake.Progress) (string, error) {
	tbl, err := lk.Table(ctx, name)
	created := false
	switch {
	case errors.Is(err, lake.ErrTableNotFound):
	case err != nil:
		return "", err
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
		return "", usagef("cannot tell the format of %q; name a .csv, .tsv or .parquet file", path)
	}
	if err != nil {
		return "", err
	}
	defer rdr.Release()

	if tbl == nil {
		var opts []lake.TableOption
		if partitionBy != "" {
			opts = append(opts, lake.PartitionBy(splitTopLevel(partitionBy)...))
		}
		tbl, err = lk.CreateTable(ctx, name, nullable(rdr.Schema()), opts...)
		if err != nil {
			return "", err
		}
		created = true
	}
	counted := newCountingReader(rdr, progress)
	out, err := tbl.Append(ctx, counted)
	if err != nil {
		if created {
			// Leave no empty table behind from a failed first import.
			if derr := lk.DropTable(context.WithoutCancel(ctx), name, true); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		return "", err
	}
	verb := "appended"
	if created {
		verb = "created " + out.Name() + " and appended"
	}
	return fmt.Sprintf("%s %d rows to %s (snapshot %d)", verb, counted.rows, out.Name(), out.Snapshot().ID), nil
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

// countingReader counts the rows read through it, for the message, and
// reports them, with the bytes and files the CSV and Parquet readers got
// through, into p (nil when no progress bar shows).
type countingReader struct {
	array.RecordReader
	rows  int64
	p     *lake.Progress
	input exec.InputProgress
}

func newCountingReader(rdr array.RecordReader, p *lake.Progress) *countingReader {
	c := &countingReader{RecordReader: rdr, p: p}
	c.input.Plan(rdr, p)
	return c
}

func (c *countingReader) Next() bool {
	more := c.RecordReader.Next()
	var n int64
	if more {
		n = c.RecordReader.RecordBatch().NumRows()
		c.rows += n
	}
	c.input.Report(c.RecordReader, c.p, n)
	return more
}

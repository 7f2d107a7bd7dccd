package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skadedb/skade/lake"
)

func init() {
	var yes bool
	register(&command{
		name:    "repair",
		summary: "rebuild a lost, empty or damaged catalog.db from the tables' newest metadata files",
		example: "skade --lake ./skade-lake repair",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&yes, "yes", false, "rebuild without asking")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 0 {
				return usagef("takes no arguments, got %q", args)
			}
			return runRepair(ctx, e, yes)
		},
	})
}

// runRepair shows the tables found on disk and, once confirmed, points a
// new catalog at them. It writes nothing before the answer.
func runRepair(ctx context.Context, e *env, yes bool) error {
	p, err := lake.PlanRepair(e.lakeDir)
	if err != nil {
		return err
	}
	rel := func(dir string) string {
		if r, err := filepath.Rel(p.Dir, dir); err == nil {
			return r
		}
		return dir
	}
	for i, pr := range p.CatalogProblems {
		if i == 0 {
			fmt.Fprintf(e.stdout, "catalog.db is damaged (bbolt's check):\n")
		}
		fmt.Fprintf(e.stdout, "  %s\n", pr)
	}
	registered := 0
	fmt.Fprintf(e.stdout, "tables found in %s:\n", p.Dir)
	for _, t := range p.Tables {
		name := strings.Join(t.Ident, ".")
		if t.Shadowed != "" {
			fmt.Fprintf(e.stdout, "  %-24s %s  (skipped: %s has newer metadata under the same name)\n", name, rel(t.Dir), rel(t.Shadowed))
			continue
		}
		registered++
		fmt.Fprintf(e.stdout, "  %-24s %s  (metadata version %d, last changed %s)\n", name, rel(t.Metadata), t.Version, t.Updated.UTC().Format("2006-01-02 15:04:05Z"))
	}
	for _, d := range p.Unreadable {
		fmt.Fprintf(e.stdout, "  (no readable metadata in %s: left alone)\n", rel(d))
	}
	if registered == 0 {
		fmt.Fprintln(e.stdout, "  none")
	}
	if !yes {
		fmt.Fprintf(e.stdout, "rebuild %s with these %d tables? The current file, if any, is kept beside it. [y/N] ", "catalog.db", registered)
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stdout, "nothing changed")
			return nil
		}
	}
	kept, err := lake.Repair(ctx, p)
	if err != nil {
		return err
	}
	if kept != "" {
		fmt.Fprintf(e.stdout, "the old catalog is kept as %s\n", rel(kept))
	}
	fmt.Fprintf(e.stdout, "rebuilt catalog.db with %d tables\n", registered)
	return nil
}

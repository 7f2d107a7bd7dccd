package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func init() {
	var olderThan string
	var retainLast int
	register(&command{
		name:    "expire",
		args:    "TABLE",
		summary: "expire old snapshots and delete the files only they reach",
		example: "skade expire events --older-than 7d --retain-last 5",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&olderThan, "older-than", "7d", "expire snapshots committed longer ago than this (e.g. 7d, 12h, 30m, 0s)")
			fs.IntVar(&retainLast, "retain-last", 1, "always keep this many of the newest snapshots")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			return runExpire(ctx, e, args, olderThan, retainLast)
		},
	})
}

func runExpire(ctx context.Context, e *env, args []string, olderThan string, retainLast int) error {
	if len(args) != 1 {
		return usagef("needs one table name")
	}
	age, err := parseAge(olderThan)
	if err != nil {
		return usagef("--older-than: %v", err)
	}
	lk, tbl, err := e.table(ctx, args[0])
	if err != nil {
		return err
	}
	defer lk.Close()
	res, err := tbl.ExpireSnapshots(ctx, time.Now().Add(-age), retainLast)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "expired %d snapshots of %s, deleted %d files\n", len(res.Expired), tbl.Name(), len(res.DeletedFiles))
	return nil
}

// parseAge parses a duration that may also use d for days ("7d", "1d12h").
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration; write e.g. 7d, 12h or 30m", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration; write e.g. 7d, 12h or 30m", s)
	}
	return days + d, nil
}

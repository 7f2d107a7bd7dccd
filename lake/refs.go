package lake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// alterRef runs Spark's branch and tag DDL: CREATE [OR REPLACE] | REPLACE
// BRANCH|TAG and DROP BRANCH|TAG. A ref is only a name for a snapshot:
// no data file is written or read.
func (s *Session) alterRef(ctx context.Context, tbl *Table, a *parser.RefAction) (*Result, error) {
	name := identText(a.Name)
	kind := table.BranchRef
	if a.Tag {
		kind = table.TagRef
	}
	ret := snapshot.Retention{}
	if a.Retain != nil {
		d, err := refDuration(a.Retain)
		if err != nil {
			return nil, err
		}
		ret.MaxRefAge = d
	}
	if a.MaxSnapshotAge != nil {
		d, err := refDuration(a.MaxSnapshotAge)
		if err != nil {
			return nil, err
		}
		ret.MaxSnapshotAge = d
	}
	if a.MinSnapshots != nil {
		if *a.MinSnapshots < 1 || *a.MinSnapshots > 1<<30 {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("WITH SNAPSHOT RETENTION needs between 1 and %d snapshots, not %d", 1<<30, *a.MinSnapshots)}
		}
		ret.MinSnapshots = int(*a.MinSnapshots)
	}
	_, err := s.commitRefs(ctx, tbl, "alter table", func(meta table.Metadata) (*snapshot.RefChange, error) {
		if a.Drop {
			return snapshot.DropRef(meta, tbl.Name(), name, kind, a.IfExists)
		}
		var id int64
		if a.Version != nil {
			id = *a.Version
		} else if cur := meta.CurrentSnapshot(); cur != nil {
			id = cur.SnapshotID
		} else {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("table %s has no snapshot yet, so a %s has nothing to point at; write to the table first", tbl.Name(), kind)}
		}
		return snapshot.SetRef(meta, tbl.Name(), name, kind, id, ret, a.Create, a.Replace, a.IfNotExists)
	})
	if err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

// refDuration converts RETAIN's n DAYS|HOURS|MINUTES.
func refDuration(d *parser.Duration) (time.Duration, error) {
	unit := map[string]time.Duration{"DAYS": 24 * time.Hour, "HOURS": time.Hour, "MINUTES": time.Minute}[d.Unit]
	if d.N < 1 || d.N > int64(100*365*24*time.Hour/unit) {
		return 0, &sentinelError{ErrInvalidArgument, fmt.Errorf("a retention of %d %s is out of range; give between 1 and 100 years", d.N, strings.ToLower(d.Unit))}
	}
	return time.Duration(d.N) * unit, nil
}

// commitRefs commits the ref change plan computes from the table's
// metadata: inside a transaction into its copy of the table, otherwise
// through the catalog, planned again on the new metadata when another
// writer committed first (a ref change reads nothing but refs, and its
// requirements say which refs it read). A nil change commits nothing.
// It returns the metadata the change was planned on.
func (s *Session) commitRefs(ctx context.Context, tbl *Table, op string, plan func(table.Metadata) (*snapshot.RefChange, error)) (table.Metadata, error) {
	if s.tx != nil {
		e, err := s.tx.entry(ctx, tbl.id)
		if err != nil {
			return nil, err
		}
		if e.meta == nil {
			return nil, &sentinelError{ErrTableNotFound, fmt.Errorf("%s %s: the table does not exist", op, tbl.Name())}
		}
		meta := e.meta
		change, err := plan(meta)
		if err != nil || change == nil {
			return meta, translate(err)
		}
		if _, _, err := (txCatalog{tx: s.tx, e: e}).CommitTable(ctx, tbl.id, change.Requirements, change.Updates); err != nil {
			return nil, translate(tbl.opError(op, err))
		}
		s.tx.s.lastStaged = !s.tx.implicit
		return meta, nil
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		cur, err := s.lk.load(ctx, tbl.id)
		if err != nil {
			return nil, err
		}
		meta := cur.Metadata()
		change, err := plan(meta)
		if err != nil || change == nil {
			return meta, translate(err)
		}
		unlock := s.lk.cat.LockTable(tbl.id)
		_, _, err = s.lk.cat.CommitTable(ctx, tbl.id, change.Requirements, change.Updates)
		unlock()
		if err == nil {
			return meta, nil
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			return nil, translate(tbl.opError(op, err))
		}
		lastErr = err
	}
	return nil, translate(tbl.opError(op, fmt.Errorf("another writer kept changing the table's refs: %w", lastErr)))
}

// fastForward is CALL system.fast_forward(table, branch, to): branch moves
// to to's head, which must descend from branch's, and the writes staged on
// to become branch's (write-audit-publish: fast_forward('t', 'main',
// 'audit') publishes what the audit branch holds). It fails with a
// conflict, and changes nothing, when branch moved since to was created
// from it.
func (s *Session) fastForward(ctx context.Context, args map[string]string) (*Result, error) {
	tbl, err := s.table(ctx, args["table"])
	if err != nil {
		return nil, err
	}
	branch, to := args["branch"], args["to"]
	var before, after int64
	_, err = s.commitRefs(ctx, tbl, "fast_forward", func(meta table.Metadata) (*snapshot.RefChange, error) {
		change, b, a, err := snapshot.FastForward(meta, tbl.Name(), branch, to)
		before, after = b, a
		return change, err
	})
	if err != nil {
		return nil, err
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "branch_updated", Type: arrow.BinaryTypes.String},
		{Name: "previous_ref", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "updated_ref", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	var prev any = before
	if before < 0 {
		prev = nil
	}
	batch, err := exec.BuildBatch(memoryAllocator, schema, [][]any{{branch, prev, after}})
	if err != nil {
		return nil, err
	}
	return &Result{schema: schema, batches: []arrow.RecordBatch{batch}}, nil
}

// procedureArgs reads a CALL's string arguments, by position (names in
// order) or by name (name => 'value'); every name is required.
func procedureArgs(proc string, st *parser.Call, names []string) (map[string]string, error) {
	count := strconv.Itoa(len(names))
	if len(names) < 4 {
		count = []string{"no", "one", "two", "three"}[len(names)]
	}
	usage := proc + " takes " + count + " strings: "
	for i, n := range names {
		if i > 0 {
			usage += ", "
		}
		usage += n + " => '…'"
	}
	args := map[string]string{}
	for i, a := range st.Args {
		key := ""
		if na, ok := a.(*parser.NamedArg); ok {
			key, a = strings.ToLower(na.Name.Name), na.Value
		} else if i < len(names) {
			key = names[i]
		}
		lit, ok := a.(*parser.Literal)
		if key == "" || !ok || lit.Kind != parser.LitString {
			return nil, &sentinelError{ErrInvalidArgument, errors.New(usage)}
		}
		if _, dup := args[key]; dup {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: argument %s given twice", proc, key)}
		}
		args[key] = lit.Value
	}
	for _, n := range names {
		if args[n] == "" {
			return nil, &sentinelError{ErrInvalidArgument, errors.New(usage)}
		}
	}
	if len(args) != len(names) {
		return nil, &sentinelError{ErrInvalidArgument, errors.New(usage)}
	}
	return args, nil
}

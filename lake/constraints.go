package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/plan"
	skscan "github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// Constraint enforcement. A write stages its change; then, before it
// commits, the table's CHECK, UNIQUE and PRIMARY KEY constraints
// (plan.TableConstraints) are checked over what the change added: the
// data files the staged snapshot holds and the snapshot it started from
// did not. So every write path is covered the same way (INSERT, UPDATE,
// DELETE, MERGE, ON CONFLICT, COPY, Append, Upsert), in both write modes.
//
//   - A CHECK must not be false for any row of an added file.
//   - A UNIQUE or PRIMARY KEY key of an added row must not equal another
//     added row's, nor a row the staged snapshot still holds in the other
//     files (read with their deletes applied, pruned by the added keys'
//     statistics). A key holding a NULL equals nothing, as in PostgreSQL.
//
// The check reads back the added files (only the constrained columns). A
// copy-on-write rewrite re-adds the rows it kept, so those are checked
// again; they cannot fail. A write to a table with a UNIQUE or PRIMARY
// KEY commits asserting the snapshot it checked against: a race it loses
// is a conflict the statement runs again for, not a replay on a head the
// check never saw.

// ConstraintError is a write that breaks a table constraint: SQLSTATE
// 23514 for a CHECK, 23505 for a UNIQUE or PRIMARY KEY.
type ConstraintError struct {
	State      string
	Constraint string
	Msg        string
}

func (e *ConstraintError) Error() string    { return e.Msg }
func (e *ConstraintError) SQLState() string { return e.State }

// hasUniqueConstraint reports whether the table has a UNIQUE or PRIMARY
// KEY constraint; writes to it commit asserting their snapshot.
func hasUniqueConstraint(meta table.Metadata) bool {
	cons, err := plan.TableConstraints(meta.Properties())
	if err != nil {
		return true // unreadable: the check refuses the write anyway
	}
	return slices.ContainsFunc(cons, plan.TableConstraint.Unique)
}

// checkConstraints checks the constraints of the table txn writes over
// what its staged change added to branch ("" for main) since before.
func checkConstraints(ctx context.Context, name string, before *table.Table, branch string, txn *table.Transaction) error {
	staged, err := txn.StagedTable()
	if err != nil {
		return err
	}
	cons, err := plan.TableConstraints(staged.Metadata().Properties())
	if err != nil || len(cons) == 0 {
		return err
	}
	ref := branch
	if ref == "" {
		ref = table.MainBranch
	}
	after := staged.Metadata().SnapshotByName(ref)
	var prev *table.Snapshot
	if before != nil {
		prev = before.Metadata().SnapshotByName(ref)
	}
	if after == nil || prev != nil && prev.SnapshotID == after.SnapshotID {
		return nil
	}
	had := snapshot.FileSet{}
	if prev != nil {
		tasks, err := before.Scan(table.WithSnapshotID(prev.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			had.Add(t.File.FilePath())
		}
	}
	tasks, err := staged.Table.Scan(table.WithSnapshotID(after.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return err
	}
	var added []table.FileScanTask
	seen := snapshot.FileSet{}
	for _, t := range tasks {
		if !had.Has(t.File.FilePath()) {
			added = append(added, t)
			seen.Add(t.File.FilePath())
		}
	}
	if len(added) == 0 {
		return nil
	}
	c := &constraintCheck{name: name, tbl: staged.Table, snap: after, cons: cons}
	if err := c.prepare(ctx); err != nil {
		return err
	}
	defer c.release()
	if err := c.readAdded(ctx, added); err != nil {
		return err
	}
	return c.probeRest(ctx, seen)
}

// validateConstraints checks new constraints over every row the staged
// table holds: ALTER TABLE … ADD CONSTRAINT.
func validateConstraints(ctx context.Context, name, branch string, txn *table.Transaction, cons []plan.TableConstraint) error {
	staged, snap, err := stagedHead(txn, branch)
	if err != nil || snap == nil {
		return err
	}
	tasks, err := staged.Table.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil || len(tasks) == 0 {
		return err
	}
	c := &constraintCheck{name: name, tbl: staged.Table, snap: snap, cons: cons, validating: true}
	if err := c.prepare(ctx); err != nil {
		return err
	}
	defer c.release()
	return c.readAdded(ctx, tasks)
}

// constraintCheck is one write's check.
type constraintCheck struct {
	// validating: the rows are a table's, checked for a new constraint
	validating bool
	name       string
	tbl        *table.Table
	snap       *table.Snapshot
	cons       []plan.TableConstraint

	fields []string // the columns read from the added files
	read   *arrow.Schema
	checks []*plan.CheckEval
	keys   []*uniqueKeys
}

// uniqueKeys are one UNIQUE or PRIMARY KEY's keys of the added rows.
type uniqueKeys struct {
	c     plan.TableConstraint
	idx   []int // positions in the added files' batches
	enc   *exec.KeyEncoder
	ht    *exec.HashTable
	vals  [][]arrow.Array // per key column, the added rows' values (for pruning)
	rows  int
	types []arrow.DataType
}

func (c *constraintCheck) prepare(ctx context.Context) error {
	cols, err := plan.TargetColumns(&plan.TableRef{Name: c.name, Table: c.tbl})
	if err != nil {
		return err
	}
	typeOf := map[string]arrow.DataType{}
	for _, tc := range cols {
		typeOf[tc.Name] = tc.Type
	}
	pos := map[string]int{}
	var fs []arrow.Field
	use := func(col string) (int, error) {
		name := ""
		for _, tc := range cols {
			if strings.EqualFold(tc.Name, col) {
				name = tc.Name
			}
		}
		if name == "" {
			return 0, fmt.Errorf("constraint on %s names column %q, which the table no longer has; drop the constraint", c.name, col)
		}
		if i, ok := pos[name]; ok {
			return i, nil
		}
		pos[name] = len(c.fields)
		c.fields = append(c.fields, name)
		fs = append(fs, arrow.Field{Name: name, Type: typeOf[name], Nullable: true})
		return pos[name], nil
	}
	for _, k := range c.cons {
		for _, col := range k.Columns {
			if _, err := use(col); err != nil {
				return err
			}
		}
	}
	if len(c.fields) == 0 {
		// a CHECK that reads no column still runs once per row
		if _, err := use(cols[0].Name); err != nil {
			return err
		}
	}
	c.read = arrow.NewSchema(fs, nil)
	planner := &plan.Planner{}
	for _, k := range c.cons {
		if !k.Unique() {
			ce, err := planner.CompileCheck(ctx, k, cols, c.fields)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			c.checks = append(c.checks, ce)
			continue
		}
		u := &uniqueKeys{c: k, vals: make([][]arrow.Array, len(k.Columns))}
		for _, col := range k.Columns {
			i, _ := use(col)
			u.idx = append(u.idx, i)
			u.types = append(u.types, typeOf[c.fields[i]])
		}
		enc, err := exec.NewKeyEncoder(u.types)
		if err != nil {
			return err
		}
		u.enc, u.ht = enc, exec.NewHashTable(enc.Width(), 1024)
		c.keys = append(c.keys, u)
	}
	return nil
}

func (c *constraintCheck) release() {
	for _, u := range c.keys {
		for _, vs := range u.vals {
			for _, v := range vs {
				v.Release()
			}
		}
	}
}

// scan runs fn over the batches of tasks, read through the executor (their
// deletes applied).
func (c *constraintCheck) scan(ctx context.Context, tasks []table.FileScanTask, filter iceberg.BooleanExpression, fields []string, read *arrow.Schema, fn func(arrow.RecordBatch) error) error {
	if len(tasks) == 0 {
		return nil
	}
	op, err := exec.NewFileScan(c.name, c.tbl, c.snap, fields, read, filter, tasks)
	if err != nil {
		return err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return err
	}
	defer op.Close()
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, exec.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = fn(b)
		b.Release()
		if err != nil {
			return err
		}
	}
}

// readAdded evaluates the CHECKs over the added rows and gathers their
// keys, refusing a key two added rows share.
func (c *constraintCheck) readAdded(ctx context.Context, added []table.FileScanTask) error {
	ec := &exec.EvalContext{Ctx: ctx, Mem: memory.DefaultAllocator}
	var keys exec.RowKeys
	cols := make([]arrow.Array, 8)
	return c.scan(ctx, added, nil, c.fields, c.read, func(b arrow.RecordBatch) error {
		for _, ch := range c.checks {
			res, err := ch.Expr.Eval(ec, b)
			if err != nil {
				return fmt.Errorf("%s: check constraint %q: %w", c.name, ch.Name, err)
			}
			bad := -1
			if bools, ok := res.(*array.Boolean); ok {
				for r := 0; r < bools.Len(); r++ {
					if bools.IsValid(r) && !bools.Value(r) {
						bad = r
						break
					}
				}
			}
			res.Release()
			if bad >= 0 && c.validating {
				return &ConstraintError{State: "23514", Constraint: ch.Name,
					Msg: fmt.Sprintf("check constraint %q of relation %q is violated by some row: %s", ch.Name, c.name, rowText(b, ch.Columns, bad))}
			}
			if bad >= 0 {
				return &ConstraintError{State: "23514", Constraint: ch.Name,
					Msg: fmt.Sprintf("new row for relation %q violates check constraint %q: failing row contains %s", c.name, ch.Name, rowText(b, ch.Columns, bad))}
			}
		}
		for _, u := range c.keys {
			cols = cols[:0]
			for _, i := range u.idx {
				cols = append(cols, b.Column(i))
			}
			if err := u.enc.Encode(cols, &keys); err != nil {
				return err
			}
			for r := 0; r < keys.N; r++ {
				if anyNull(cols, r) {
					continue
				}
				if _, isNew := u.ht.FindOrInsert(keys.Key(r), keys.Hashes[r]); !isNew {
					if c.validating {
						return &ConstraintError{State: "23505", Constraint: u.c.Name,
							Msg: fmt.Sprintf("could not create unique constraint %q on relation %q: key (%s)=(%s) is duplicated", u.c.Name, c.name, strings.Join(u.c.Columns, ", "), keyText(cols, r))}
					}
					return duplicateKey(c.name, u.c, cols, r)
				}
			}
			for i, col := range cols {
				col.Retain()
				u.vals[i] = append(u.vals[i], col)
			}
			u.rows += int(b.NumRows())
		}
		return nil
	})
}

// probeRest reads the keys of the rows the staged snapshot holds outside
// the added files and refuses one an added row shares.
func (c *constraintCheck) probeRest(ctx context.Context, added snapshot.FileSet) error {
	var keys exec.RowKeys
	for _, u := range c.keys {
		if u.ht.Len() == 0 {
			continue
		}
		filter, none, err := u.pruneFilter(c.read)
		if err != nil {
			return err
		}
		if none {
			continue
		}
		opts := skscan.PinSnapshot(c.tbl, c.snap.SnapshotID)
		if filter != nil {
			opts = append(opts, table.WithRowFilter(filter))
		}
		tasks, err := c.tbl.Scan(opts...).PlanFiles(ctx)
		if err != nil {
			return err
		}
		var rest []table.FileScanTask
		for _, t := range tasks {
			if !added.Has(t.File.FilePath()) {
				rest = append(rest, t)
			}
		}
		fields := make([]string, len(u.idx))
		fs := make([]arrow.Field, len(u.idx))
		for i, j := range u.idx {
			fields[i] = c.fields[j]
			fs[i] = c.read.Field(j)
		}
		cols := make([]arrow.Array, len(fields))
		err = c.scan(ctx, rest, filter, fields, arrow.NewSchema(fs, nil), func(b arrow.RecordBatch) error {
			for i := range cols {
				cols[i] = b.Column(i)
			}
			if err := u.enc.Encode(cols, &keys); err != nil {
				return err
			}
			for r := 0; r < keys.N; r++ {
				if anyNull(cols, r) {
					continue
				}
				if _, found := u.ht.Find(keys.Key(r), keys.Hashes[r]); found {
					return duplicateKey(c.name, u.c, cols, r)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pruneFilter is the filter, on each key column, that the added keys'
// values imply (mergeinto's early filter): files it rules out hold no
// equal key.
func (u *uniqueKeys) pruneFilter(read *arrow.Schema) (iceberg.BooleanExpression, bool, error) {
	var conj []iceberg.BooleanExpression
	for i, j := range u.idx {
		all, err := array.Concatenate(u.vals[i], memory.DefaultAllocator)
		if err != nil {
			return nil, false, err
		}
		expr, none := mergeinto.KeyFilter(read.Field(j), all, 1000)
		all.Release()
		if none {
			return nil, true, nil
		}
		if expr != nil {
			conj = append(conj, expr)
		}
	}
	switch len(conj) {
	case 0:
		return nil, false, nil
	case 1:
		return conj[0], false, nil
	}
	return iceberg.NewAnd(conj[0], conj[1], conj[2:]...), false, nil
}

func anyNull(cols []arrow.Array, r int) bool {
	for _, c := range cols {
		if c.IsNull(r) {
			return true
		}
	}
	return false
}

func duplicateKey(table string, c plan.TableConstraint, cols []arrow.Array, r int) error {
	return &ConstraintError{State: "23505", Constraint: c.Name,
		Msg: fmt.Sprintf("duplicate key value violates unique constraint %q of relation %q: key (%s)=(%s) already exists", c.Name, table, strings.Join(c.Columns, ", "), keyText(cols, r))}
}

func keyText(cols []arrow.Array, r int) string {
	vals := make([]string, len(cols))
	for i, col := range cols {
		vals[i] = col.ValueStr(r)
	}
	return strings.Join(vals, ", ")
}

// rowText renders row r's values of the named columns, "(a, b) = (1, x)".
func rowText(b arrow.RecordBatch, cols []string, r int) string {
	var names, vals []string
	for _, name := range cols {
		for i, f := range b.Schema().Fields() {
			if strings.EqualFold(f.Name, name) {
				names = append(names, f.Name)
				v := "null"
				if b.Column(i).IsValid(r) {
					v = b.Column(i).ValueStr(r)
				}
				vals = append(vals, v)
			}
		}
	}
	return "(" + strings.Join(names, ", ") + ") = (" + strings.Join(vals, ", ") + ")"
}

// validateNotNull refuses SET NOT NULL on a column that holds a NULL in
// the rows the transaction's staged snapshot holds (their deletes
// applied), as PostgreSQL does (23502).
func validateNotNull(ctx context.Context, name, branch string, txn *table.Transaction, cols []string) error {
	staged, snap, err := stagedHead(txn, branch)
	if err != nil || snap == nil {
		return err
	}
	tcols, err := plan.TargetColumns(&plan.TableRef{Name: name, Table: staged.Table})
	if err != nil {
		return err
	}
	for _, col := range cols {
		var typ arrow.DataType
		for _, tc := range tcols {
			if tc.Name == col {
				typ = tc.Type
			}
		}
		if typ == nil {
			return fmt.Errorf("%s: no column %q (bug)", name, col)
		}
		// the files whose statistics say they may hold a NULL
		tasks, err := staged.Table.Scan(table.WithSnapshotID(snap.SnapshotID), table.WithRowFilter(iceberg.IsNull(iceberg.Reference(col)))).PlanFiles(ctx)
		if err != nil {
			return err
		}
		c := &constraintCheck{name: name, tbl: staged.Table, snap: snap}
		read := arrow.NewSchema([]arrow.Field{{Name: col, Type: typ, Nullable: true}}, nil)
		errFound := errors.New("found")
		err = c.scan(ctx, tasks, nil, []string{col}, read, func(b arrow.RecordBatch) error {
			if b.Column(0).NullN() > 0 {
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return &ConstraintError{State: "23502", Msg: fmt.Sprintf("column %q of relation %q contains null values", col, name)}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stagedHead is the transaction's staged table and the snapshot its
// branch (main when "") points at there: the rows an ALTER checks; a nil
// snapshot when the table has none yet.
func stagedHead(txn *table.Transaction, branch string) (*table.StagedTable, *table.Snapshot, error) {
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, nil, err
	}
	ref := branch
	if ref == "" {
		ref = table.MainBranch
	}
	return staged, staged.Metadata().SnapshotByName(ref), nil
}

package mergeinto

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// Spec is one bound MERGE INTO statement: everything Execute needs, with
// names already resolved to column indices and expressions already typed.
//
// # Row layouts
//
// Source key expressions (Key.Source) are evaluated on the source
// operator's batches.
//
// Every other expression (On, Clause.Cond, assignment and INSERT values,
// Returning) is evaluated on the JOINED row: the target's columns, in
// TargetSchema order, followed by the source operator's columns. For a NOT
// MATCHED [BY TARGET] row the target half is NULL; for a NOT MATCHED BY
// SOURCE row the source half is NULL. Returning expressions see the old
// and the new target row after the joined row, and one more column at the
// end, the action; bind merge_action() to MergeAction{}.
type Spec struct {
	// Table is the target's display name, used in every message:
	// "merge into <Table>: ...".
	Table string
	// Target is the table as the caller's transaction sees it. Its IO must
	// be the caller's tracked IO: Execute writes every data file through it,
	// and on failure removes what it wrote through it.
	Target *table.Table
	// Snapshot is the target snapshot the statement reads (the
	// transaction's head for the main branch); nil for a table never
	// written. The partition spec is the target's default spec.
	Snapshot *table.Snapshot

	// Source is the USING relation. Execute opens, drains and closes it.
	// It is read once, completely, before the target is read, so a source
	// that scans the target itself (a self-merge) sees the pre-merge rows.
	Source exec.Operator

	// Keys are the equality conjuncts of ON (target.col = source expr). At
	// least one is required. Their types must match exactly or differ by a
	// lossless widening (int32 vs int64, float32 vs float64, decimals of
	// one scale), which Execute applies.
	Keys []Key
	// On is the rest of the ON condition (a residual over the joined row),
	// or nil. A pair of rows matches when every key is equal (NULL never
	// equals anything) and On is TRUE.
	On exec.Expr

	// Clauses are the WHEN clauses in written order.
	Clauses []Clause

	// Returning, when non-nil, makes Execute return rows instead of only a
	// count: one row per inserted, updated or deleted target row, with
	// these expressions evaluated on the joined row in which the target
	// half holds the row's new values (INSERT, UPDATE) or its old values
	// (DELETE), followed by the old target row (NULL for INSERT) and the
	// new one (NULL for DELETE), then the action column (see MergeAction).
	Returning []exec.Expr
	// ReturningNames names the RETURNING columns; defaults to col1, col2...
	ReturningNames []string

	// Mode selects how changed rows are written.
	Mode Mode
	// Budget bounds the memory held for the source hash table; nil means
	// unlimited.
	Budget *exec.Budget
	// Options tune execution; the zero value is right for most callers.
	Options Options
}

// Key is one ON equality: target column Target (an index into
// TargetSchema) equals Source (an expression over the source's columns).
type Key struct {
	Target int
	Source exec.Expr
}

// Mode is the write strategy for changed rows.
type Mode int

const (
	// CopyOnWrite rewrites every data file that holds a changed row.
	CopyOnWrite Mode = iota
	// MergeOnRead writes position deletes (deletion vectors on format
	// version 3) for changed rows plus new data files and rewrites
	// nothing (mor.go).
	MergeOnRead
)

func (m Mode) String() string {
	switch m {
	case CopyOnWrite:
		return "copy-on-write"
	case MergeOnRead:
		return "merge-on-read"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Options tune Execute.
type Options struct {
	// Mem allocates batches; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Now is the statement start time for now() and friends; zero means
	// the time Execute starts.
	Now time.Time
	// BatchSize caps the rows per batch for the source build, the insert
	// batches and the target read; 0 means 8192.
	BatchSize int
	// SnapshotProperties are added to the summary of the staged snapshot.
	SnapshotProperties map[string]string
	// ExactKeyLimit is the most distinct source values of a key column
	// for which file pruning uses the exact set (key IN (...)) instead of
	// the range [min, max]; 0 means 1000, a negative value disables it.
	ExactKeyLimit int
	// BufferLimit bounds, in bytes, how much of a data file Execute keeps
	// in memory while it does not yet know whether the file changes; past
	// it the rows are let go and read again if the file turns out to
	// change. 0 means 256 MiB.
	BufferLimit int64
	// TargetFileSize overrides the table's write.target-file-size-bytes
	// for the files this statement writes; 0 keeps the table's.
	TargetFileSize int64
}

func (o Options) withDefaults() Options {
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 8192
	}
	if o.ExactKeyLimit == 0 {
		o.ExactKeyLimit = 1000
	}
	if o.BufferLimit <= 0 {
		o.BufferLimit = 256 << 20
	}
	return o
}

// ClauseKind is the row category a WHEN clause applies to.
type ClauseKind int

const (
	// Matched: a target row and the one source row it matches.
	Matched ClauseKind = iota
	// NotMatchedByTarget: a source row that matches no target row
	// (WHEN NOT MATCHED [BY TARGET]).
	NotMatchedByTarget
	// NotMatchedBySource: a target row that no source row matches.
	NotMatchedBySource
)

func (k ClauseKind) String() string {
	switch k {
	case Matched:
		return "WHEN MATCHED"
	case NotMatchedByTarget:
		return "WHEN NOT MATCHED"
	case NotMatchedBySource:
		return "WHEN NOT MATCHED BY SOURCE"
	}
	return fmt.Sprintf("ClauseKind(%d)", int(k))
}

// ActionKind is what a clause does to its row.
type ActionKind int

const (
	ActionDoNothing ActionKind = iota
	ActionUpdate
	ActionDelete
	ActionInsert
)

func (k ActionKind) String() string {
	switch k {
	case ActionDoNothing:
		return "DO NOTHING"
	case ActionUpdate:
		return "UPDATE"
	case ActionDelete:
		return "DELETE"
	case ActionInsert:
		return "INSERT"
	}
	return fmt.Sprintf("ActionKind(%d)", int(k))
}

// Clause is one WHEN clause. Clauses are tried in written order; for each
// row, the first clause of the row's category whose Cond is TRUE (NULL
// does not fire) wins, and later clauses are not evaluated for that row.
type Clause struct {
	Kind ClauseKind
	// Cond is the AND predicate over the joined row, or nil for none.
	Cond   exec.Expr
	Action Action
}

// Action is a clause's THEN part. Build it with Update, Delete, Insert or
// DoNothing.
type Action struct {
	Kind ActionKind
	// Set holds UPDATE's assignments; columns not named keep their value.
	Set []Assignment
	// Values holds INSERT's full target row, one expression per target
	// column in TargetSchema order (the binder fills omitted columns with
	// their defaults, i.e. NULL).
	Values []exec.Expr
}

// Assignment is UPDATE SET column = Expr, Column an index into
// TargetSchema and Expr of exactly that column's type.
type Assignment struct {
	Column int
	Expr   exec.Expr
}

// Update returns an UPDATE SET action.
func Update(set ...Assignment) Action { return Action{Kind: ActionUpdate, Set: set} }

// Delete returns a DELETE action.
func Delete() Action { return Action{Kind: ActionDelete} }

// Insert returns an INSERT action with one expression per target column.
func Insert(values ...exec.Expr) Action { return Action{Kind: ActionInsert, Values: values} }

// DoNothing returns a DO NOTHING action: the row is left as it is and
// later clauses are not tried.
func DoNothing() Action { return Action{Kind: ActionDoNothing} }

// String renders the clause for EXPLAIN, e.g.
// "WHEN MATCHED AND (#1 > 0) THEN UPDATE SET #1 = #5".
func (c Clause) String() string {
	var b strings.Builder
	b.WriteString(c.Kind.String())
	if c.Cond != nil {
		fmt.Fprintf(&b, " AND %s", c.Cond)
	}
	b.WriteString(" THEN ")
	b.WriteString(c.Action.Kind.String())
	switch c.Action.Kind {
	case ActionUpdate:
		b.WriteString(" SET ")
		for i, a := range c.Action.Set {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "#%d = %s", a.Column, a.Expr)
		}
	case ActionInsert:
		b.WriteString(" VALUES (")
		for i, e := range c.Action.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteString(")")
	}
	return b.String()
}

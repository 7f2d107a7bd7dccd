package plan

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Planner binds and plans statements against a Catalog.
type Planner struct {
	Catalog Catalog
	Options Options
	// Now is the statement's start time (now(), current_date).
	Now time.Time
	// Pinned pins tables (by TableRef.Name) to snapshot ids: a read-only
	// table handle's SQL sees only its snapshot.
	Pinned map[string]int64
	// Params are the statement's arguments, for $1, $2, … and ?. A string
	// argument behaves as a quoted literal: it takes its context's type.
	Params []any
	// ParamTypes, when not nil, asks for a description of the statement
	// rather than a plan to run: Params are ignored, each $n binds as a
	// NULL of unknown type, and the first type its context casts it to is
	// recorded in ParamTypes[n-1] (nil: no context gave one). The plan is
	// for describing only (its schema); Release it without running it.
	ParamTypes []arrow.DataType
	// Settings are the session's SET variables, by lower-case name: what
	// current_user, current_database() and version() report.
	Settings map[string]string
}

func (p *Planner) binder(ctx context.Context) *binder {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &binder{ctx: ctx, cat: p.Catalog, now: now, opts: p.Options, pinned: p.Pinned, params: p.Params, paramTypes: p.ParamTypes, settings: p.Settings}
}

// Plan is a bound query ready to run.
type Plan struct {
	b    *binder
	Root Node
	// ready: Root's init plans ran and Root is optimized.
	ready bool
}

// Query binds a query. Its uncorrelated subqueries are init plans, run
// when the plan is built to run (Operator), not while binding.
func (p *Planner) Query(ctx context.Context, q *parser.Query) (*Plan, error) {
	b := p.binder(ctx)
	root, err := b.bindQuery(q, nil)
	if err != nil {
		return nil, err
	}
	return &Plan{b: b, Root: root}, nil
}

// Schema is the result's schema: the output names and types.
func (pl *Plan) Schema() *arrow.Schema { return schemaOf(pl.Root.Columns()) }

// prepare runs the init plans and optimizes Root, once.
func (pl *Plan) prepare() error {
	if pl.ready {
		return nil
	}
	if err := pl.b.foldInits(pl.Root); err != nil {
		return err
	}
	pl.Root = optimize(pl.b, pl.Root)
	pl.ready = true
	return nil
}

// Operator builds the operator tree, running the init plans first. Each
// call builds a fresh tree.
func (pl *Plan) Operator() (exec.Operator, error) {
	if err := pl.prepare(); err != nil {
		return nil, err
	}
	return pl.b.build(pl.Root)
}

// explainTree optimizes Root for EXPLAIN without running anything: init
// plans stay as they are, and render under the plan.
func (pl *Plan) explainTree() Node {
	if !pl.ready {
		pl.Root = optimize(pl.b, pl.Root)
		pl.ready = !pl.b.hasInits()
	}
	return pl.Root
}

// Explain renders the logical plan and the physical operators. With
// analyze it runs the statement (discarding its rows) and adds each
// operator's metrics.
func (pl *Plan) Explain(ctx context.Context, analyze bool) (string, error) {
	var sb strings.Builder
	var root Node
	if analyze {
		if err := pl.prepare(); err != nil {
			return "", err
		}
		root = pl.Root
	} else {
		root = pl.explainTree()
	}
	writeTree := func(text string, indent string) {
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			sb.WriteString(indent + l + "\n")
		}
	}
	sb.WriteString("logical plan:\n")
	writeTree(explainLogical(root), "  ")
	writeInits(&sb, pl.b, "  ")
	var op exec.Operator
	var err error
	if analyze {
		op, err = pl.Operator()
	} else {
		op, err = pl.b.build(root)
	}
	if err != nil {
		return "", err
	}
	defer op.Close()
	sb.WriteString("physical plan:\n")
	if analyze {
		if err := op.Open(ctx); err != nil {
			return "", err
		}
		for {
			b, err := op.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", err
			}
			b.Release()
		}
		for _, l := range strings.Split(strings.TrimRight(exec.Explain(op, true), "\n"), "\n") {
			sb.WriteString("  " + l + "\n")
		}
		return sb.String(), nil
	}
	var walk func(exec.Operator, int) error
	walk = func(op exec.Operator, depth int) error {
		sb.WriteString(strings.Repeat("  ", depth+1))
		sb.WriteString(op.String())
		if ts, ok := op.(*exec.TableScan); ok {
			scanned, skipped, err := ts.PlanFiles(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(&sb, " (files scanned=%d skipped=%d)", scanned, skipped)
		}
		sb.WriteString("\n")
		for _, c := range op.Children() {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(op, 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

var timingRE = regexp.MustCompile(`time=[0-9.]+[a-zµ]+`)

// MaskTimings replaces the timings of EXPLAIN ANALYZE output, for golden
// files.
func MaskTimings(s string) string { return timingRE.ReplaceAllString(s, "time=?") }

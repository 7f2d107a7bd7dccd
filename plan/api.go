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
}

func (p *Planner) binder(ctx context.Context) *binder {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &binder{ctx: ctx, cat: p.Catalog, now: now, opts: p.Options, pinned: p.Pinned, params: p.Params}
}

// Plan is a bound, optimized query ready to run.
type Plan struct {
	b    *binder
	Root Node
}

// Query binds and optimizes a query.
func (p *Planner) Query(ctx context.Context, q *parser.Query) (*Plan, error) {
	b := p.binder(ctx)
	root, err := b.bindQuery(q, nil)
	if err != nil {
		return nil, err
	}
	return &Plan{b: b, Root: optimize(b, root)}, nil
}

// Schema is the result's schema: the output names and types.
func (pl *Plan) Schema() *arrow.Schema { return schemaOf(pl.Root.Columns()) }

// Operator builds the operator tree. Each call builds a fresh tree.
func (pl *Plan) Operator() (exec.Operator, error) { return pl.b.build(pl.Root) }

// Explain renders the logical plan and the physical operators. With
// analyze it runs the statement (discarding its rows) and adds each
// operator's metrics.
func (pl *Plan) Explain(ctx context.Context, analyze bool) (string, error) {
	var sb strings.Builder
	sb.WriteString("logical plan:\n")
	for _, l := range strings.Split(strings.TrimRight(explainLogical(pl.Root), "\n"), "\n") {
		sb.WriteString("  " + l + "\n")
	}
	op, err := pl.Operator()
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

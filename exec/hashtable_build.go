package exec

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// JoinBuild is a materialized build side: its rows, concatenated into one
// array per column, and a JoinTable on its keys whose build row i is row i
// of Columns. HashJoin and NestedLoopJoin use it, and MERGE INTO can too:
//
//	src, err := exec.BuildJoin(ctx, source, sourceKeys, opts, "merge into t: source")
//	defer src.Release()
//	for each target batch:
//	    groups, err := src.Probe(ec, batch, targetKeys)
//	    for row, g := range groups {          // g < 0: no match (or a NULL key)
//	        for s := src.Table.First(g); s >= 0; s = src.Table.Next(s) {
//	            // evaluate the ON residual on (target row, source row s);
//	            // a second passing s is a cardinality violation.
//	            src.Table.SetMatched(s)
//	        }
//	    }
//	src.Table.AppendUnmatched(...)            // source rows for NOT MATCHED inserts
//
// Memory (the input batches, the table and the matched bitmap) is reserved
// in opts.Budget until Release. Batches are concatenated column by column,
// each column's parts released as soon as it is done, so the peak exceeds
// the reservation by at most one column.
type JoinBuild struct {
	Schema  *arrow.Schema
	Columns []arrow.Array
	// Table is nil when BuildJoin got no keys (a nested loop join).
	Table *JoinTable
	// Rows is the number of build rows.
	Rows int
	// OutOfRange is the number of build rows left out of Table because a
	// key value lies outside HashOptions.KeyRanges (AppendOutOfRange
	// lists them).
	OutOfRange int
	outside    []uint64 // those rows, a bit each; nil when none

	enc *KeyEncoder
	res htReservation
	own Prober // Probe's
}

// BuildJoin drains op, which the caller has opened (and closes), and builds
// a JoinTable on keys evaluated on its rows; with no keys it only
// materializes. what names the build side in a memory-limit error.
func BuildJoin(ctx context.Context, op Operator, keys []Expr, opts HashOptions, what string) (_ *JoinBuild, err error) {
	opts = opts.withDefaults()
	jb := &JoinBuild{Schema: op.Schema(), res: htReservation{budget: opts.Budget, what: what}}
	jb.own.jb = jb
	defer func() {
		if err != nil {
			jb.Release()
		}
	}()
	if len(keys) > 0 {
		if jb.enc, err = NewKeyEncoder(htExprTypes(keys)); err != nil {
			return nil, err
		}
		jb.enc.nullSafe = opts.NullSafeKeys
	}
	var batches []arrow.RecordBatch
	defer func() { htReleaseBatches(batches) }()
	var batchBytes int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := op.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		batches = append(batches, b)
		batchBytes += BatchBytes(b)
		jb.Rows += int(b.NumRows())
		if err := jb.res.setTo(batchBytes); err != nil {
			return nil, err
		}
	}
	if jb.enc == nil {
		if jb.Columns, err = htConcatBatches(opts.Mem, op.Schema(), batches); err != nil {
			return nil, err
		}
		return jb, nil
	}
	// The key columns first: then the batches' columns are concatenated
	// on a goroutine of their own while the table is built from the keys.
	ec := opts.evalContext(ctx)
	keyCols := make([][]arrow.Array, len(batches))
	defer func() {
		for _, c := range keyCols {
			htReleaseArrays(c)
		}
	}()
	var colBytes int64
	for i, b := range batches {
		c, err := htEvalExprs(ec, keys, b)
		if err != nil {
			return nil, err
		}
		keyCols[i] = c
		colBytes += ArraysBytes(c)
	}
	var skip [][]bool
	if opts.KeyRanges != nil && jb.Rows > 0 {
		ranges, err := opts.KeyRanges(jb.Rows)
		if err != nil {
			return nil, err
		}
		skip, jb.OutOfRange = keysOutOfRange(ranges, keyCols)
		if jb.OutOfRange > 0 {
			jb.outside = outsideRows(skip, keyCols, jb.Rows)
		}
	}
	// Sized for every row it takes up front, the table never grows.
	jb.Table = newJoinTable(jb.enc.Width(), jb.Rows-jb.OutOfRange, true /* pooled */)
	if err := jb.res.setTo(batchBytes + jb.Table.Bytes() + colBytes); err != nil {
		return nil, err
	}
	type concatenated struct {
		cols []arrow.Array
		err  error
	}
	done := make(chan concatenated, 1)
	go func(batches []arrow.RecordBatch) {
		cols, err := htConcatBatches(opts.Mem, op.Schema(), batches)
		done <- concatenated{cols, err}
	}(slices.Clone(batches))
	batches = nil // the goroutine releases them
	err = jb.addKeys(ec, keyCols, skip, batchBytes+colBytes)
	c := <-done
	if err == nil {
		err = c.err
	}
	if err != nil {
		htReleaseArrays(c.cols)
		return nil, err
	}
	jb.Columns = c.cols
	return jb, jb.res.setTo(batchBytes + jb.Table.Bytes())
}

// addKeys adds the build rows, whose key columns are keyCols (one slice
// per batch), to jb.Table and seals it: in slot order
// (JoinTable.addPartitioned) where the table is large, else batch by
// batch. Rows that skip marks (per batch; nil: none) are left out, as
// rows with a NULL key are. held is the memory reserved besides the
// table. The key columns are evaluated once, before, so that the
// partitioned build's two encodings see the same keys even when an
// expression is volatile.
func (jb *JoinBuild) addKeys(ec *EvalContext, keyCols [][]arrow.Array, skip [][]bool, held int64) error {
	encode := func(i int, rk *RowKeys) error {
		if err := jb.enc.Encode(keyCols[i], rk); err != nil {
			return err
		}
		if i < len(skip) && skip[i] != nil {
			for r, s := range skip[i] {
				if s {
					rk.Null[r] = true
				}
			}
			rk.AnyNull = true
		}
		return nil
	}
	// the rows left out are counted apart from those with a NULL key
	defer func() { jb.Table.nullRows -= jb.OutOfRange }()
	if jb.Table.dirty && !jb.Table.partitioned() {
		clear(jb.Table.islots) // not reached: a dirty table is one addPartitioned takes
		jb.Table.dirty = false
	}
	if jb.Table.partitioned() {
		scratch := held
		err := jb.Table.addPartitioned(ec.Ctx, len(keyCols), encode, func(n int64) error {
			scratch += n
			return jb.res.setTo(jb.Table.Bytes() + scratch)
		})
		if err != nil {
			return err
		}
	} else {
		var rk RowKeys
		for i := range keyCols {
			if err := encode(i, &rk); err != nil {
				return err
			}
			jb.Table.AddRows(&rk)
			if err := jb.res.setTo(held + jb.Table.Bytes()); err != nil {
				return err
			}
		}
	}
	jb.Table.Seal()
	return jb.res.setTo(held + jb.Table.Bytes())
}

// Probe evaluates keys (types equal to the build keys) on batch and
// returns each row's group in Table, -1 when the key is absent or has a
// NULL. The result is reused by the next Probe. Probe is for one
// goroutine; others probe the same build through their own Prober.
func (jb *JoinBuild) Probe(ec *EvalContext, batch arrow.RecordBatch, keys []Expr) ([]int32, error) {
	return jb.own.Probe(ec, batch, keys)
}

// Prober probes a JoinBuild with its own scratch space, so that several
// goroutines can probe one build at once, each through its own Prober,
// as long as nothing marks or inserts meanwhile (the table is read only).
type Prober struct {
	jb    *JoinBuild
	pkeys RowKeys
	ids   []int32
}

// NewProber returns a Prober of jb.
func (jb *JoinBuild) NewProber() *Prober { return &Prober{jb: jb} }

// Probe is JoinBuild.Probe. The keys must not hold state that evaluation
// changes: columns, and casts and arithmetic of them.
func (p *Prober) Probe(ec *EvalContext, batch arrow.RecordBatch, keys []Expr) ([]int32, error) {
	jb := p.jb
	if jb.Table == nil {
		return nil, fmt.Errorf("exec: probing a join build that has no keys (planner bug)")
	}
	cols, err := htEvalExprs(ec, keys, batch)
	if err != nil {
		return nil, err
	}
	defer htReleaseArrays(cols)
	n := int(batch.NumRows())
	p.ids = htGrow(p.ids, n)
	if jb.Table.probeDenseRaw(jb.enc, cols, p.ids[:n], &p.pkeys) {
		return p.ids[:n], nil
	}
	if err := jb.enc.Encode(cols, &p.pkeys); err != nil {
		return nil, err
	}
	p.ids = htGrow(p.ids, p.pkeys.N)
	jb.Table.Probe(&p.pkeys, p.ids)
	return p.ids[:p.pkeys.N], nil
}

// Reserve adds n bytes to the build's reservation, for state a caller
// keeps alongside it (e.g. a matched bitmap).
func (jb *JoinBuild) Reserve(n int64) error { return jb.res.add(n) }

// Release frees the columns, returns the reserved memory and gives the
// table's arrays back to the process's pools (hashtable_pool.go): neither
// the table nor a Prober may be used after. It is idempotent.
func (jb *JoinBuild) Release() {
	htReleaseArrays(jb.Columns)
	jb.Columns = nil
	if jb.Table != nil {
		jb.Table.release()
	}
	jb.Table = nil
	jb.res.release()
}

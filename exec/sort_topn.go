package exec

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/scan"
)

// skTopEntry is a row in the top-N heap; seq is its input position, the
// tie-breaker that keeps top-N stable like the full sort.
type skTopEntry struct {
	ref skRef
	seq int64
}

// consumeTopN keeps the first Limit+Offset rows in a max-heap (worst row
// on top). Memory stays O(N): a batch that contributes no row is released
// at once, and when the batches held grow past 2N rows plus a batch the
// heap's rows are compacted into a single batch.
func (s *Sort) consumeTopN(ctx context.Context) error {
	n := int(s.opts.Limit + s.opts.Offset)
	st := newSkStore(s)
	s.store = st
	heap := make([]skTopEntry, 0, n)
	var refcnt []int // heap rows per store batch
	var seq int64
	less := func(a, b skTopEntry) bool {
		if c := st.keys.compare(a.ref, b.ref); c != 0 {
			return c < 0
		}
		return a.seq < b.seq
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(heap) {
				return
			}
			c := l
			if r := l + 1; r < len(heap) && less(heap[l], heap[r]) {
				c = r
			}
			if !less(heap[i], heap[c]) {
				return
			}
			heap[i], heap[c] = heap[c], heap[i]
			i = c
		}
	}
	up := func(i int) {
		for i > 0 {
			p := (i - 1) / 2
			if !less(heap[p], heap[i]) {
				return
			}
			heap[i], heap[p] = heap[p], heap[i]
			i = p
		}
	}
	compactAt := int64(2*n + s.opts.BatchRows)
	var cutBuf []int64
	for {
		b, err := s.pull(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		bi := int32(len(st.batches))
		st.add(b, 0)
		refcnt = append(refcnt, 0)
		rows := int32(b.NumRows())
		keep := s.batchCut(b, n, &cutBuf)
		for r := int32(0); r < rows; r++ {
			if keep != nil && !keep(int(r)) {
				continue
			}
			e := skTopEntry{skRef{bi, r}, seq + int64(r)}
			if len(heap) < n {
				heap = append(heap, e)
				refcnt[bi]++
				up(len(heap) - 1)
				continue
			}
			if less(e, heap[0]) {
				refcnt[heap[0].ref.b]--
				refcnt[bi]++
				heap[0] = e
				down(0)
			}
		}
		seq += int64(rows)
		if refcnt[bi] == 0 {
			st.truncate(int(bi))
			refcnt = refcnt[:bi]
			continue
		}
		// Only batches that keep heap rows are held, and accounted.
		need := BatchBytes(b)
		compact := st.rows > compactAt
		if s.opts.Budget.Reserve(need, "ORDER BY ... LIMIT") == nil {
			st.reserved[bi] = need
		} else {
			compact = true // compacting reserves just the heap's rows
		}
		if compact {
			if err := s.compactTopN(st, heap); err != nil {
				return err
			}
			refcnt = append(refcnt[:0], len(heap))
			s.metrics.Inc("topn_compactions", 1)
		}
		if s.top != nil && len(heap) == n {
			s.publishTop(st, heap[0].ref.b, heap[0].ref.r)
		}
	}
	slices.SortFunc(heap, func(a, b skTopEntry) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	s.sorted = make([]skRef, len(heap))
	for i, e := range heap {
		s.sorted[i] = e.ref
	}
	s.pos = int(min(s.opts.Offset, int64(len(s.sorted))))
	s.end = len(s.sorted)
	return nil
}

// compactTopN replaces the store's batches with one batch holding just the
// heap's rows, and points the heap at it.
func (s *Sort) compactTopN(st *skStore, heap []skTopEntry) error {
	refs := make([]skRef, len(heap))
	for i, e := range heap {
		refs[i] = e.ref
	}
	b, err := skGatherBatch(s.opts.Mem, s.extSchema, st.batches, refs)
	if err != nil {
		return err
	}
	st.reset()
	need := BatchBytes(b)
	if err := s.opts.Budget.Reserve(need, "ORDER BY ... LIMIT"); err != nil {
		b.Release()
		return fmt.Errorf("sort: %w", err)
	}
	st.add(b, need)
	for i := range heap {
		heap[i].ref = skRef{0, int32(i)}
	}
	return nil
}

// batchCut is, for a batch of more than n rows whose first key is an
// integer-like column without NULLs, which of its rows may be among the
// best n: those not strictly worse, by the first key, than the batch's
// n-th best value. n rows of the batch alone beat any other, whatever
// the later keys and input order say. nil where it does not apply, or
// keeps every row. Rows in key order (ids, times read against their
// ORDER BY) would otherwise each go through the heap.
func (s *Sort) batchCut(b arrow.RecordBatch, n int, buf *[]int64) func(r int) bool {
	col := b.Column(s.keyCols[0])
	rows := int(b.NumRows())
	if n >= rows || col.NullN() > 0 {
		return nil
	}
	vals := htGrow(*buf, rows)[:rows]
	*buf = vals
	switch col.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		copy(vals, htFixedValues[int64](col))
	case arrow.INT32, arrow.DATE32:
		for i, v := range htFixedValues[int32](col) {
			vals[i] = int64(v)
		}
	case arrow.FLOAT64, arrow.FLOAT32:
		floatKeys(col, vals)
	default:
		return nil
	}
	desc := s.keys[0].Descending
	k := n - 1 // the n-th smallest
	if desc {
		k = rows - n // the n-th largest
	}
	cut := skSelect(vals, k)
	switch col.DataType().ID() {
	case arrow.FLOAT64, arrow.FLOAT32:
		// skSelect reordered vals: the keys again, by row
		keys := vals
		floatKeys(col, keys)
		if desc {
			return func(r int) bool { return keys[r] >= cut }
		}
		return func(r int) bool { return keys[r] <= cut }
	case arrow.INT64, arrow.TIMESTAMP:
		v := htFixedValues[int64](col)
		if desc {
			return func(r int) bool { return v[r] >= cut }
		}
		return func(r int) bool { return v[r] <= cut }
	default:
		v := htFixedValues[int32](col)
		if desc {
			return func(r int) bool { return int64(v[r]) >= cut }
		}
		return func(r int) bool { return int64(v[r]) <= cut }
	}
}

// floatKeys fills keys with the FloatKeys of col, a REAL or DOUBLE
// column (as the top bound orders them).
func floatKeys(col arrow.Array, keys []int64) {
	if col.DataType().ID() == arrow.FLOAT64 {
		for i, v := range htFixedValues[float64](col) {
			keys[i] = scan.FloatKey(v)
		}
		return
	}
	for i, v := range htFixedValues[float32](col) {
		keys[i] = scan.FloatKey(float64(v))
	}
}

// skSelect is the k-th smallest of a (0-based), reordering a
// (quickselect, Hoare's partition about a median of three).
func skSelect(a []int64, k int) int64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

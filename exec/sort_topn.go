package exec

import (
	"context"
	"fmt"
	"io"
	"slices"
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
		for r := int32(0); r < rows; r++ {
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

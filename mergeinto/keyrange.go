package mergeinto

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
)

// The target's key range: before the source rows go into the join table,
// the target's data file statistics give, for each key column of an
// integer type (int, long, date, time, timestamp), a range that holds
// every value of that column in the snapshot: the smallest lower bound
// and the largest upper bound of its data files. A source row whose key
// value lies outside it matches no target row. It is left out of the join
// table (exec.HashOptions.KeyRanges) and reaches the NOT MATCHED clauses
// as any unmatched row does. New keys past the largest one (ids, event
// times) are such rows: most of an upsert's inserts, the MERGE
// benchmark's new rows. A smaller table is faster to build and to probe.
//
// INVARIANT: a range never leaves out a value the target holds. A data
// file without both bounds of a key column (metrics mode counts or none,
// a column added after the file was written) or with a bound whose width
// is not the column's leaves that key unbounded, unless the file counts
// the column NULL in every row.
//
// The conflict filter is built from every source row (earlyFilter), so a
// concurrent commit that adds one of these keys is caught as before.

// keyRangeMinRows is the source size from which the ranges are worth a
// read of the target's manifests. Tests lower it (export_test.go).
var keyRangeMinRows = 50_000

// keyRanges is exec.HashOptions.KeyRanges for the merge's build.
func (m *merger) keyRanges(ctx context.Context) func(rows int) ([]*exec.KeyRange, error) {
	return func(rows int) ([]*exec.KeyRange, error) {
		if rows < keyRangeMinRows {
			return nil, nil
		}
		return m.targetKeyRanges(ctx), nil
	}
}

// targetKeyRanges returns the range of each key column over the target
// snapshot's data files (nil where unknown), or nil when no key has one.
// A manifest that cannot be read gives no ranges: planning the scan reads
// it again and reports the error.
func (m *merger) targetKeyRanges(ctx context.Context) []*exec.KeyRange {
	type key struct {
		id    int
		width int // of the column's bounds: 4 or 8 bytes
		wide  bool
		rg    exec.KeyRange
	}
	var keys []*key
	sch := m.spec.Target.Schema()
	for i, c := range m.p.keyCols {
		k := &key{rg: exec.KeyRange{Lo: math.MaxInt64, Hi: math.MinInt64}}
		if c < len(sch.Fields()) && rangeable(m.p.target.Field(c).Type, m.p.keyTypes[i]) {
			f := sch.Field(c)
			k.id = f.ID
			switch f.Type.(type) {
			case iceberg.Int32Type, iceberg.DateType:
				k.width = 4
			case iceberg.Int64Type:
				k.width, k.wide = 8, true
			case iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
				k.width = 8
			}
		}
		if k.width == 0 {
			k = nil
		}
		keys = append(keys, k)
	}
	live := func() int {
		n := 0
		for _, k := range keys {
			if k != nil {
				n++
			}
		}
		return n
	}
	if live() == 0 {
		return nil
	}
	if snap := m.spec.Snapshot; snap != nil {
		fsys, err := m.spec.Target.FS(ctx)
		if err != nil {
			return nil
		}
		mans, err := snap.Manifests(fsys)
		if err != nil {
			return nil
		}
		for _, mf := range mans {
			if mf.ManifestContent() != iceberg.ManifestContentData {
				continue
			}
			for e, err := range mf.Entries(fsys, true /* discardDeleted */) {
				if err != nil || ctx.Err() != nil {
					return nil
				}
				df := e.DataFile()
				if df.ContentType() != iceberg.EntryContentData || df.Count() == 0 {
					continue
				}
				for i, k := range keys {
					if k == nil {
						continue
					}
					lo, hi, ok := fileKeyBounds(df, k.id, k.width, k.wide)
					switch {
					case ok:
						k.rg.Lo, k.rg.Hi = min(k.rg.Lo, lo), max(k.rg.Hi, hi)
					case df.NullValueCounts()[k.id] != df.Count():
						keys[i] = nil // a file's values unknown: the key unbounded
					}
				}
				if live() == 0 {
					return nil
				}
			}
		}
	}
	out := make([]*exec.KeyRange, len(keys))
	for i, k := range keys {
		if k != nil {
			out[i] = &k.rg
		}
	}
	return out
}

// rangeable reports whether a key of target type tt, compared as wide, is
// bounded by the integers behind its values: the same integer-like type,
// or an integer widened to a wider one.
func rangeable(tt, wide arrow.DataType) bool {
	switch tt.ID() {
	case arrow.INT32, arrow.INT64:
		_, ok := intRank(wide)
		return ok
	case arrow.DATE32, arrow.TIME64, arrow.TIMESTAMP:
		return arrow.TypeEqual(tt, wide)
	}
	return false
}

// fileKeyBounds decodes df's lower and upper bounds of field id, stored
// as Iceberg's single-value serialization of width bytes; an int column
// since promoted to long (wide) may hold 4-byte bounds. ok is false when
// either bound is missing or of another width.
func fileKeyBounds(df iceberg.DataFile, id, width int, wide bool) (lo, hi int64, ok bool) {
	lb, ok1 := df.LowerBoundValues()[id]
	ub, ok2 := df.UpperBoundValues()[id]
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	dec := func(b []byte) (int64, bool) {
		switch {
		case len(b) == width && width == 8:
			return int64(binary.LittleEndian.Uint64(b)), true
		case len(b) == 4 && (width == 4 || wide):
			return int64(int32(binary.LittleEndian.Uint32(b))), true
		}
		return 0, false
	}
	lo, ok1 = dec(lb)
	hi, ok2 = dec(ub)
	return lo, hi, ok1 && ok2
}

package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// GROUP BY a dictionary-encoded string column. A scan asked to
// (TableScan.SetDictionary) hands the column over as a dictionary array
// where the file stores it so: each row an index into the row group's
// dictionary. The aggregate then looks each dictionary entry up in its
// hash table once, the first time a row has it, and gives every row its
// entry's group: no row's bytes are copied, encoded, hashed or compared.
// The entries go into the same table, encoded as the same keys, as rows
// that come as plain strings (a file or row group stored otherwise), so
// the two mix in one aggregation. A batch the fast path does not take (a
// spilling aggregate, another shape of key) has its dictionaries decoded
// and goes the usual way.

// haDict is the map from the entries of a dictionary the group key came
// with to their group ids.
type haDict struct {
	dict arrow.Array // retained: no other dictionary can take its place
	keys RowKeys     // each entry's key, as the encoder encodes it
	gid  []int32     // each entry's group id; -1 until a row has it
}

// bytes is what the map holds: the entries' keys, their groups, and the
// dictionary it keeps alive.
func (d *haDict) bytes() int64 {
	k := d.keys
	return int64(cap(k.Data)+8*cap(k.Hashes)+8*cap(k.Offsets)+cap(k.Null)+8*cap(k.pos)+4*cap(d.gid)) + ArrayDataBytes(d.dict.Data())
}

func (d *haDict) release() {
	if d != nil && d.dict != nil {
		d.dict.Release()
		d.dict = nil
	}
}

// haHasDict reports whether a column of b is a dictionary array.
func haHasDict(b arrow.RecordBatch) bool {
	for _, c := range b.Columns() {
		if c.DataType().ID() == arrow.DICTIONARY {
			return true
		}
	}
	return false
}

// addDictBatch is addBatch for a batch whose one group key is a column
// that came as a dictionary array with Int32 indices; handled is false,
// with nothing done, where the batch must go the usual way (decoded): the
// aggregate is spilling, the key is not such a column, or the batch's
// most new groups do not fit the budget (the usual way then spills).
func (h *HashAggregate) addDictBatch(b arrow.RecordBatch, idsBuf *[]int32, sel *[]bool) (handled bool, err error) {
	if h.table == nil || h.spill != nil || len(h.groupBy) != 1 {
		return false, nil
	}
	col, ok := h.groupBy[0].(*Column)
	if !ok || col.Index < 0 || col.Index >= int(b.NumCols()) {
		return false, nil
	}
	for i, c := range b.Columns() {
		if i != col.Index && c.DataType().ID() == arrow.DICTIONARY {
			return false, nil // (no aggregate reads a dictionary array)
		}
	}
	d, ok := b.Column(col.Index).(*array.Dictionary)
	if !ok {
		return false, nil
	}
	idx, ok := d.Indices().(*array.Int32)
	if !ok {
		return false, nil
	}
	dict := d.Dictionary()
	if !arrow.TypeEqual(dict.DataType(), h.enc.Types()[0]) {
		return false, nil
	}
	hd, err := h.dictFor(dict)
	if err != nil {
		return false, err
	}
	n := int(b.NumRows())
	// Reserve the most this batch can add: every entry, and NULL, a new
	// group.
	most := min(n, dict.Len()+1)
	need := h.stateBytes() + h.table.GrowBytes(most, len(hd.keys.Data)+1) + ArrayDataBytes(d.Data()) + h.spillReserve()
	if c := h.growCap(h.groups + most); c > h.capGroups {
		need += int64(c) * h.groupBytes()
	}
	if err := h.res.setTo(need); err != nil {
		return false, nil
	}
	*idsBuf = htGrow(*idsBuf, n)
	ids := (*idsBuf)[:n]
	before := int32(h.table.Len())
	var fresh []int32 // the entries of the batch's new groups, in order; -1 for NULL
	vals := idx.Int32Values()
	nd := int32(len(hd.gid))
	for r, k := range vals {
		if idx.IsNull(r) {
			g, isNew, err := h.nullGroup()
			if err != nil {
				return true, err
			}
			if isNew {
				fresh = append(fresh, -1)
			}
			ids[r] = g
			continue
		}
		if k < 0 || k >= nd {
			return true, fmt.Errorf("hash aggregate: dictionary index %d of a dictionary of %d (bug)", k, nd)
		}
		g := hd.gid[k]
		if g < 0 {
			var isNew bool
			g, isNew = h.table.FindOrInsert(hd.keys.Key(int(k)), hd.keys.Hashes[k])
			hd.gid[k] = g
			if isNew {
				fresh = append(fresh, k)
			}
		}
		ids[r] = g
	}
	if len(fresh) > 0 {
		kc, err := h.dictKeys(dict, fresh)
		if err != nil {
			return true, err
		}
		h.addKeys([]arrow.Array{kc}, before)
	}
	h.metrics.Inc("dictionary_batches", 1)
	return true, h.updateKept(b, ids, sel)
}

// haDictsKept is how many dictionaries' maps an aggregate keeps: the
// batches of parallel scans (an Exchange) come from as many row groups,
// each with its dictionary, interleaved.
const haDictsKept = 8

// dictFor is the map of dictionary dict, made (its entries encoded) where
// none of the last haDictsKept dictionaries is it.
func (h *HashAggregate) dictFor(dict arrow.Array) (*haDict, error) {
	for i, hd := range h.dicts {
		if hd.dict.Data() == dict.Data() {
			copy(h.dicts[1:i+1], h.dicts[:i])
			h.dicts[0] = hd
			return hd, nil
		}
	}
	hd := &haDict{}
	if err := h.enc.Encode([]arrow.Array{dict}, &hd.keys); err != nil {
		return nil, err
	}
	dict.Retain()
	hd.dict = dict
	hd.gid = make([]int32, dict.Len())
	for i := range hd.gid {
		hd.gid[i] = -1
	}
	if len(h.dicts) == haDictsKept {
		h.dicts[len(h.dicts)-1].release()
		h.dicts = h.dicts[:len(h.dicts)-1]
	}
	h.dicts = append([]*haDict{hd}, h.dicts...)
	return hd, nil
}

// releaseKeyMaps lets go of the dictionaries' maps and of the integer
// key's (aggregate_intkey.go).
func (h *HashAggregate) releaseKeyMaps() {
	h.intMap.release()
	h.pack = haPack{off: true}
	for _, hd := range h.dicts {
		hd.release()
	}
	h.dicts, h.nullKey = nil, nil
}

// nullGroup is the group of the NULL key, inserted where absent.
func (h *HashAggregate) nullGroup() (int32, bool, error) {
	if h.nullKey == nil {
		null := array.MakeArrayOfNull(h.opts.Mem, h.enc.Types()[0], 1)
		defer null.Release()
		h.nullKey = &RowKeys{}
		if err := h.enc.Encode([]arrow.Array{null}, h.nullKey); err != nil {
			h.nullKey = nil
			return 0, false, err
		}
	}
	g, isNew := h.table.FindOrInsert(h.nullKey.Key(0), h.nullKey.Hashes[0])
	return g, isNew, nil
}

// dictKeys is the key values of new groups: the dictionary's entries
// fresh names (-1: NULL).
func (h *HashAggregate) dictKeys(dict arrow.Array, fresh []int32) (arrow.Array, error) {
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	defer ib.Release()
	for _, k := range fresh {
		if k < 0 {
			ib.AppendNull()
		} else {
			ib.Append(k)
		}
	}
	ia := ib.NewInt32Array()
	defer ia.Release()
	kc, err := compute.TakeArray(h.cctx, dict, ia)
	if err != nil {
		return nil, fmt.Errorf("hash aggregate: group keys: %w", err)
	}
	return kc, nil
}

// decodeDicts is b with each dictionary array decoded into an array of
// its values' type.
func (h *HashAggregate) decodeDicts(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	fields := make([]arrow.Field, b.NumCols())
	cols := make([]arrow.Array, b.NumCols())
	defer htReleaseArrays(cols)
	for i, c := range b.Columns() {
		fields[i] = b.Schema().Field(i)
		d, ok := c.(*array.Dictionary)
		if !ok {
			c.Retain()
			cols[i] = c
			continue
		}
		plain, err := compute.TakeArray(h.cctx, d.Dictionary(), d.Indices())
		if err != nil {
			return nil, fmt.Errorf("hash aggregate: decoding dictionary column %s: %w", fields[i].Name, err)
		}
		cols[i] = plain
		fields[i].Type = plain.DataType()
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows()), nil
}

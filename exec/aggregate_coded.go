package exec

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// GROUP BY several keys, some of them string columns that come as
// dictionary arrays (TableScan.SetDictionary): GROUP BY status, id % 10.
// The aggregate gives each string of such a column a dense code, once
// per dictionary entry, and groups by the codes in their place: the keys
// the hash table holds are then of fixed width, and no row's bytes are
// copied, encoded, hashed or compared. The codes turn back into strings
// when the groups are emitted.
//
// A batch whose column came plain (a row group or file stored without a
// dictionary) finds its strings' codes row by row, through the codes'
// hash table: about what encoding and hashing each string as a key cost
// before.

// haCoded is the codes of one coded group key: a hash table of the
// strings seen, each string's code its id there, and the strings in code
// order.
type haCoded struct {
	col   int // the input column
	enc   *KeyEncoder
	table *HashTable
	keys  RowKeys
	ids   []int32
	vals  []arrow.Array // the strings of the codes, in order, in chunks
	valB  int64

	// the last dictionary's entries' codes (-1: NULL); dict is retained,
	// so that no other dictionary can take its place
	dict  arrow.Array
	entry []int32

	out arrow.Array // vals as one array, once finished

	valid []bool // scratch of codesOf
}

func newHACoded(col int) (*haCoded, error) {
	enc, err := NewKeyEncoder([]arrow.DataType{arrow.BinaryTypes.String})
	if err != nil {
		return nil, err
	}
	return &haCoded{col: col, enc: enc, table: NewHashTable(enc.Width(), 0)}, nil
}

func (c *haCoded) bytes() int64 {
	k := c.keys
	return c.table.Bytes() + c.valB + int64(cap(k.Data)+8*cap(k.Hashes)+8*cap(k.Offsets)+cap(k.Null)+8*cap(k.pos)) +
		4*int64(cap(c.ids)+cap(c.entry))
}

// codesOfStrings returns the codes of a's strings (-1 where NULL); they
// are c.ids, valid until the next call. Once the aggregate spills
// (findOnly: no new codes), a string without a code gets none: it can have no group in
// memory, and its rows go to a partition. It gets a stand-in below -1
// made from its hash instead, the same for every row of it, so that they
// go to the same partition (strings sharing a stand-in share one too,
// which is only a matter of balance).
func (c *haCoded) codesOfStrings(ctx context.Context, a arrow.Array, findOnly bool) ([]int32, error) {
	if err := c.enc.Encode([]arrow.Array{a}, &c.keys); err != nil {
		return nil, err
	}
	n := a.Len()
	c.ids = htGrow(c.ids, n)
	ids := c.ids[:n]
	if findOnly {
		c.table.FindRows(&c.keys, ids, true /* skipNull */)
		for r, id := range ids {
			if id < 0 && a.IsValid(r) {
				ids[r] = -2 - int32(c.keys.Hashes[r]&(1<<30-1))
			}
		}
		return ids, nil
	}
	before := int32(c.table.Len())
	if c.table.FindOrInsertRows(&c.keys, ids, true /* skipNull */) > 0 {
		vs, err := htTakeColumns(ctx, []arrow.Array{a}, htNewRows(nil, ids, before))
		if err != nil {
			return nil, err
		}
		c.vals = append(c.vals, vs[0])
		c.valB += ArrayDataBytes(vs[0].Data())
	}
	return ids, nil
}

// codesOf returns the codes of a's strings, NULL where a is: a plain
// array's row by row, a dictionary array's entry by entry.
func (c *haCoded) codesOf(ctx context.Context, a arrow.Array, mem memory.Allocator, findOnly bool) (arrow.Array, error) {
	n := a.Len()
	// the codes go straight into the array's buffer; valid is scratch
	vb := memory.NewResizableBuffer(mem)
	vb.Resize(n * 4)
	defer vb.Release()
	codes := arrow.Int32Traits.CastFromBytes(vb.Bytes())[:n]
	clear(codes)
	c.valid = htGrow(c.valid, n)
	valid := c.valid[:n]
	clear(valid)
	switch a := a.(type) {
	case *array.Dictionary:
		idx, ok := a.Indices().(*array.Int32)
		if !ok {
			// other indices: decoded, and coded string by string
			plain, err := compute.TakeArray(ctx, a.Dictionary(), a.Indices())
			if err != nil {
				return nil, fmt.Errorf("hash aggregate: decoding a coded key's dictionary: %w", err)
			}
			defer plain.Release()
			return c.codesOf(ctx, plain, mem, findOnly)
		}
		if c.dict == nil || c.dict.Data() != a.Dictionary().Data() {
			if a.Dictionary().DataType().ID() != arrow.STRING {
				return nil, fmt.Errorf("hash aggregate: a coded key's dictionary of %s (bug)", a.Dictionary().DataType())
			}
			c.releaseDict()
			c.entry = htGrow(c.entry[:0], a.Dictionary().Len())
			for i := range c.entry {
				c.entry[i] = haUncoded
			}
			c.dict = a.Dictionary()
			c.dict.Retain()
		}
		// code the entries the batch uses that have no code yet (a
		// dictionary may list far more strings than its rows use)
		is := idx.Int32Values()
		var fresh []int32
		for r, i := range is {
			if idx.IsNull(r) {
				continue
			}
			if i < 0 || int(i) >= len(c.entry) {
				return nil, fmt.Errorf("hash aggregate: dictionary index %d of a dictionary of %d (bug)", i, len(c.entry))
			}
			if c.entry[i] == haUncoded {
				c.entry[i] = haUncoded + 1 // (once in fresh)
				fresh = append(fresh, i)
			}
		}
		if len(fresh) > 0 {
			sub, err := htTakeColumns(ctx, []arrow.Array{c.dict}, fresh)
			if err != nil {
				return nil, err
			}
			ids, err := c.codesOfStrings(ctx, sub[0], findOnly)
			sub[0].Release()
			if err != nil {
				return nil, err
			}
			for j, i := range fresh {
				c.entry[i] = ids[j]
			}
		}
		for r, i := range is {
			if idx.IsNull(r) {
				continue
			}
			if k := c.entry[i]; k != -1 {
				codes[r], valid[r] = k, true
			}
		}
	case *array.String:
		ids, err := c.codesOfStrings(ctx, a, findOnly)
		if err != nil {
			return nil, err
		}
		for r, k := range ids {
			if k != -1 {
				codes[r], valid[r] = k, true
			}
		}
	default:
		return nil, fmt.Errorf("hash aggregate: a coded key of %s (bug)", a.DataType())
	}
	nb, nulls := htBitmap(mem, valid)
	d := array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nb, vb}, nil, nulls, 0)
	if nb != nil {
		nb.Release()
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// SetCodedKeys names group keys (indices into groupBy) that may be coded:
// bare string columns that the scan may hand over as dictionary arrays
// and that nothing else of the aggregate reads (no other key, argument
// or FILTER). Call it before Open.
func (h *HashAggregate) SetCodedKeys(keys []int) error {
	for _, k := range keys {
		if k < 0 || k >= len(h.groupBy) {
			return fmt.Errorf("hash aggregate: coded key %d of %d (planner bug)", k, len(h.groupBy))
		}
		col, ok := h.groupBy[k].(*Column)
		if !ok || col.Type.ID() != arrow.STRING {
			return fmt.Errorf("hash aggregate: coded key %s is no string column (planner bug)", h.groupBy[k])
		}
	}
	h.codable = keys
	return nil
}

// haUncoded marks a dictionary entry not coded yet (codes are -1 for
// NULL, stand-ins below it once spilling, and 0 up).
const haUncoded = math.MinInt32

// haCodedMaxGroups bounds the groups an aggregate re-keys when it starts
// coding its keys after the first batch.
const haCodedMaxGroups = 1 << 16

// startCoded starts coding the keys SetCodedKeys named at the first batch
// in which each comes as a dictionary array, where the aggregate holds at
// most haCodedMaxGroups groups (a writer may store a file's first row
// group plain, and dictionary-encode the rest). The groups held are
// re-keyed: inserted again, in group order and with their keys coded,
// into a hash table of the coded keys' width, so each keeps its id.
func (h *HashAggregate) startCoded(b arrow.RecordBatch) error {
	if h.table == nil || h.level > 0 || h.spill != nil || h.groups > haCodedMaxGroups {
		h.codable = nil
		return nil
	}
	for _, k := range h.codable {
		col := h.groupBy[k].(*Column)
		if col.Index >= int(b.NumCols()) {
			return fmt.Errorf("hash aggregate: coded key column %d of a batch of %d (bug)", col.Index, b.NumCols())
		}
		if b.Column(col.Index).DataType().ID() != arrow.DICTIONARY {
			return nil // not yet
		}
	}
	keys := h.codable
	h.codable = nil
	types := append([]arrow.DataType(nil), h.enc.Types()...)
	coded := make([]*haCoded, len(h.groupBy))
	for _, k := range keys {
		types[k] = arrow.PrimitiveTypes.Int32
		c, err := newHACoded(h.groupBy[k].(*Column).Index)
		if err != nil {
			return err
		}
		coded[k] = c
	}
	enc, err := NewKeyEncoder(types)
	if err != nil {
		return err
	}
	table := NewHashTable(enc.Width(), 0)
	var rk RowKeys
	var ids []int32
	for ci, kc := range h.keyCh {
		for _, k := range keys {
			codes, err := coded[k].codesOf(h.cctx, kc[k], h.opts.Mem, false)
			if err != nil {
				return err
			}
			h.keyB += ArrayDataBytes(codes.Data()) - ArrayDataBytes(kc[k].Data())
			kc[k].Release()
			kc[k] = codes
		}
		if err := enc.Encode(kc, &rk); err != nil {
			return err
		}
		n := kc[0].Len()
		ids = htGrow(ids, n)
		table.FindOrInsertRows(&rk, ids[:n], false)
		for i, id := range ids[:n] {
			if int(id) != h.keyStart[ci]+i {
				return fmt.Errorf("hash aggregate: group %d re-keyed as %d (bug)", h.keyStart[ci]+i, id)
			}
		}
	}
	h.enc, h.coded, h.table = enc, coded, table
	h.metrics.Set("coded_keys", int64(len(keys)))
	return nil
}

// groupCols evaluates the group keys on b, coded keys as their codes.
func (h *HashAggregate) groupCols(b arrow.RecordBatch) ([]arrow.Array, error) {
	if h.coded == nil {
		return htEvalExprs(h.ec, h.groupBy, b)
	}
	cols := make([]arrow.Array, len(h.groupBy))
	for k, e := range h.groupBy {
		var err error
		if c := h.coded[k]; c != nil {
			if c.col >= int(b.NumCols()) {
				err = fmt.Errorf("hash aggregate: coded key column %d of a batch of %d (bug)", c.col, b.NumCols())
			} else {
				cols[k], err = c.codesOf(h.cctx, b.Column(c.col), h.opts.Mem, h.spill != nil)
			}
		} else {
			cols[k], err = e.Eval(h.ec, b)
		}
		if err != nil {
			htReleaseArrays(cols)
			return nil, err
		}
	}
	return cols, nil
}

// codedBytes is what the coded keys' strings hold.
func (h *HashAggregate) codedBytes() int64 {
	var n int64
	for _, c := range h.coded {
		if c != nil {
			n += c.bytes()
		}
	}
	return n
}

// finishCoded makes each coded key's strings one array, for emit.
func (h *HashAggregate) finishCoded() error {
	for _, c := range h.coded {
		if c == nil || c.out != nil {
			continue
		}
		c.releaseDict()
		c.table, c.keys, c.ids, c.entry = nil, RowKeys{}, nil, nil
		switch len(c.vals) {
		case 0:
			c.out = array.MakeArrayOfNull(h.opts.Mem, arrow.BinaryTypes.String, 0)
		case 1:
			c.out = c.vals[0]
		default:
			out, err := array.Concatenate(c.vals, h.opts.Mem)
			htReleaseArrays(c.vals)
			if err != nil {
				c.vals = nil
				return fmt.Errorf("hash aggregate: coded keys: %w", err)
			}
			c.out = out
		}
		c.vals = nil
	}
	return nil
}

func (c *haCoded) releaseDict() {
	if c.dict != nil {
		c.dict.Release()
		c.dict = nil
	}
}

// decodeKey turns key k's codes back into its strings.
func (h *HashAggregate) decodeKey(k int, codes arrow.Array) (arrow.Array, error) {
	if h.coded == nil || h.coded[k] == nil {
		return codes, nil
	}
	defer codes.Release()
	return htTakeNullable(h.cctx, h.coded[k].out, codes)
}

// releaseCoded lets go of the coded keys' strings.
func (h *HashAggregate) releaseCoded() {
	for _, c := range h.coded {
		if c == nil {
			continue
		}
		c.releaseDict()
		htReleaseArrays(c.vals)
		c.vals = nil
		if c.out != nil {
			c.out.Release()
			c.out = nil
		}
	}
	h.coded = nil
}

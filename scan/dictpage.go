package scan

import (
	"encoding/binary"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// The dictionary page first. Before a row group's filter columns are
// decoded, each one's dictionary page alone is read (a buffered stream
// over its column chunk, which reads no further than that page) and every
// predicate evaluated on its values. Where that settles the filter for
// every row of the group (each value passes and NULLs cannot be there, or
// pass; or none does), the group is left unread, or read without its
// filter columns when the scan returns none of them: with a status column
// that every row's value passes, decoding its indices, the bitmaps and
// the strings were half of a 10M-row scan's CPU (BENCHMARKS.md, session
// 35).

// settled is what a row group's dictionary pages settle for a filter
// node: every row passes, none does, or it depends on the row.
type settled byte

const (
	settledNo settled = iota
	settledYes
	settledMaybe
)

// precheck reads row group g's filter columns' dictionary pages and says
// what they settle for the whole filter; settledMaybe where a page cannot
// be read so (the group is then read as any other).
func (d *dictFile) precheck(g int) settled {
	if d.pagePr == nil {
		return settledMaybe
	}
	rg := d.pagePr.RowGroup(g)
	for k, leaf := range d.filter {
		d.pageDict[k] = d.pageDict[k][:0]
		pages, err := rg.GetColumnPageReader(leaf)
		if err != nil {
			return settledMaybe
		}
		ok := pages.Next()
		var vals []string
		if ok {
			dp, isDict := pages.Page().(*file.DictionaryPage)
			if isDict && (parquet.Encoding(dp.Encoding()) == parquet.Encodings.Plain || parquet.Encoding(dp.Encoding()) == parquet.Encodings.PlainDict) {
				vals, ok = plainStrings(dp.Data(), int(dp.NumValues()), d.pageDict[k])
			} else {
				ok = false
			}
		}
		pages.Close()
		if !ok {
			return settledMaybe
		}
		d.pageDict[k] = vals
	}
	return d.settle(d.df.root)
}

// settle is what the dictionary values in d.pageDict settle for node n
// (Kleene's three values).
func (d *dictFile) settle(n *dictNode) settled {
	switch n.kind {
	case 'T':
		return settledYes
	case 'F':
		return settledNo
	case '&':
		l, r := d.settle(n.l), d.settle(n.r)
		switch {
		case l == settledNo || r == settledNo:
			return settledNo
		case l == settledYes && r == settledYes:
			return settledYes
		}
		return settledMaybe
	case '|':
		l, r := d.settle(n.l), d.settle(n.r)
		switch {
		case l == settledYes || r == settledYes:
			return settledYes
		case l == settledNo && r == settledNo:
			return settledNo
		}
		return settledMaybe
	}
	any, all := false, true
	for _, v := range d.pageDict[n.col] {
		if n.pass(v) {
			any = true
		} else {
			all = false
		}
	}
	if d.nulls[n.col] {
		// a NULL may be among the rows
		any, all = any || n.null, all && n.null
	}
	switch {
	case all:
		return settledYes
	case !any:
		return settledNo
	}
	return settledMaybe
}

// plainStrings decodes n PLAIN byte array values (a 4-byte little-endian
// length, then the bytes) into vals; false where b does not hold them.
func plainStrings(b []byte, n int, vals []string) ([]string, bool) {
	vals = slices.Grow(vals[:0], n)
	for range n {
		if len(b) < 4 {
			return nil, false
		}
		l := binary.LittleEndian.Uint32(b)
		if uint64(l) > uint64(len(b)-4) {
			return nil, false
		}
		vals = append(vals, string(b[4:4+l]))
		b = b[4+l:]
	}
	return vals, true
}

package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// metadataTables are the metadata tables t$name, with Iceberg's names and
// columns (iceberg-go's inspection tables, and $properties). travel: the
// table describes one snapshot, and FOR VERSION/TIMESTAMP AS OF picks it;
// the others describe the whole table (every snapshot, every metadata
// file) and refuse time travel.
var metadataTables = []metadataTableDef{
	{"snapshots", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Snapshots }},
	{"history", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.History }},
	{"refs", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Refs }},
	{"metadata_log_entries", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) {
		return i.MetadataLogEntries
	}},
	{"properties", false, nil},
	{"files", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Files }},
	{"data_files", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.DataFiles }},
	{"delete_files", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.DeleteFiles }},
	{"entries", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Entries }},
	{"manifests", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Manifests }},
	{"partitions", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.Partitions }},
	{"position_deletes", true, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.PositionDeletes }},
	{"all_files", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.AllFiles }},
	{"all_data_files", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.AllDataFiles }},
	{"all_delete_files", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.AllDeleteFiles }},
	{"all_entries", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.AllEntries }},
	{"all_manifests", false, func(i table.InspectTable) func(context.Context) (array.RecordReader, error) { return i.AllManifests }},
}

// metadataTableDef is one metadata table; open is nil for $properties.
type metadataTableDef struct {
	name   string
	travel bool
	open   func(table.InspectTable) func(context.Context) (array.RecordReader, error)
}

// MetadataTableNames are the metadata tables' names, in the order
// messages list them.
func MetadataTableNames() []string {
	out := make([]string, len(metadataTables))
	for i, m := range metadataTables {
		out[i] = m.name
	}
	return out
}

// metadataTable binds t$name, read at the table's current metadata
// (staged metadata inside a transaction), or with time travel at the
// snapshot it names.
func (b *binder) metadataTable(t *parser.TableName, ref *TableRef, suffix string) (Node, error) {
	i := slices.IndexFunc(metadataTables, func(m metadataTableDef) bool { return m.name == suffix })
	if i < 0 {
		names := MetadataTableNames()
		return nil, errorf(t.Pos, "metadata table %q does not exist%s; the metadata tables are $%s",
			ref.Name+"$"+suffix, didYouMean(suffix, names), strings.Join(names, ", $"))
	}
	m := metadataTables[i]
	tbl := ref.Table
	if t.AsOf != nil {
		if !m.travel {
			return nil, errorf(t.Pos, "metadata table %s$%s describes the whole table and cannot be read with time travel; $files, $entries, $manifests, $partitions and $position_deletes can", ref.Name, m.name)
		}
		snap, err := b.snapshotFor(ref, t.AsOf)
		if err != nil {
			return nil, err
		}
		if snap != nil {
			if tbl, err = snapshot.Pinned(tbl, snap); err != nil {
				return nil, atPos(t.Pos, fmt.Errorf("%s$%s: %w", ref.Name, m.name, err))
			}
		}
	}
	var open func(context.Context) (array.RecordReader, error)
	if m.open == nil {
		meta := tbl.Metadata()
		open = func(context.Context) (array.RecordReader, error) { return propertiesReader(meta) }
	} else {
		open = m.open(tbl.Inspect())
	}
	n, err := b.readerNode(ref.Name+"$"+m.name, open)
	return n, atPos(t.Pos, err)
}

// TableProperties are meta's properties with its format version as
// 'format-version', as Spark's Iceberg tables list them.
func TableProperties(meta table.Metadata) iceberg.Properties {
	props := maps.Clone(meta.Properties())
	if props == nil {
		props = iceberg.Properties{}
	}
	props[table.PropertyFormatVersion] = strconv.Itoa(meta.Version())
	return props
}

// propertiesReader is $properties: key and value, by key.
func propertiesReader(meta table.Metadata) (array.RecordReader, error) {
	props := TableProperties(meta)
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.BinaryTypes.String}, {Name: "value", Type: arrow.BinaryTypes.String}}, nil)
	kb, vb := array.NewStringBuilder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	defer kb.Release()
	defer vb.Release()
	for _, k := range slices.Sorted(maps.Keys(props)) {
		kb.Append(k)
		vb.Append(props[k])
	}
	ks, vs := kb.NewArray(), vb.NewArray()
	defer ks.Release()
	defer vs.Release()
	b := array.NewRecordBatch(schema, []arrow.Array{ks, vs}, int64(ks.Len()))
	defer b.Release()
	return array.NewRecordReader(schema, []arrow.RecordBatch{b})
}

package catalog_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// sameJSON checks that the catalog's encoder writes what iceberg-go's own
// MarshalJSON writes, as JSON values, and that the result parses back to
// equal metadata.
func sameJSON(t *testing.T, what string, enc func(table.Metadata) ([]byte, error), meta table.Metadata) {
	t.Helper()
	got, err := enc(meta)
	if err != nil {
		t.Fatalf("%s: encode: %v", what, err)
	}
	want, err := meta.(json.Marshaler).MarshalJSON()
	if err != nil {
		t.Fatalf("%s: MarshalJSON: %v", what, err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: our output is not JSON: %v", what, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: encodings differ\nours:      %s\niceberg-go: %s", what, got, want)
	}
	back, err := table.ParseMetadataBytes(got)
	if err != nil {
		t.Fatalf("%s: parse our output: %v", what, err)
	}
	if !back.Equals(meta) {
		t.Fatalf("%s: parsed back, the metadata differs", what)
	}
}

func TestMetadataEncodingMatchesIcebergGo(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			c := newLake(t)
			tbl, err := c.CreateTable(ctx, table.Identifier{"main", "enc"}, testSchema, withProps(iceberg.Properties{"format-version": version, "k": "v"}))
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "new table", c.MarshalMetadata, tbl.Metadata())
			for i := int64(0); i < 4; i++ {
				if tbl, err = appendRows(t, tbl, i*10, 10); err != nil {
					t.Fatal(err)
				}
				sameJSON(t, "after an append", c.MarshalMetadata, tbl.Metadata())
				// the file the commit wrote is our encoding too
				raw, err := os.ReadFile(tbl.MetadataLocation())
				if err != nil {
					t.Fatal(err)
				}
				back, err := table.ParseMetadataBytes(raw)
				if err != nil {
					t.Fatal(err)
				}
				if !back.Equals(tbl.Metadata()) {
					t.Fatal("the written metadata file parses to different metadata")
				}
			}
			// parsed metadata (snapshots decoded lazily) encodes the same
			raw, err := os.ReadFile(tbl.MetadataLocation())
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := table.ParseMetadataBytes(raw)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "parsed", c.MarshalMetadata, parsed)

			// refs, statistics, schema evolution, properties, encryption keys
			snaps := tbl.Metadata().Snapshots()
			first, last := snaps[0].SnapshotID, snaps[len(snaps)-1].SnapshotID
			key := "k1"
			updates := []table.Update{
				table.NewSetSnapshotRefUpdate("v1", first, table.TagRef, 86400000, -1, -1),
				table.NewSetSnapshotRefUpdate("dev", last, table.BranchRef, -1, 3600000, 2),
				table.NewSetStatisticsUpdate(table.StatisticsFile{SnapshotID: last, StatisticsPath: tbl.Location() + "/metadata/s.puffin", FileSizeInBytes: 10, FileFooterSizeInBytes: 4, KeyMetadata: &key, BlobMetadata: []table.BlobMetadata{}}),
				table.NewSetPartitionStatisticsUpdate(table.PartitionStatisticsFile{SnapshotID: last, StatisticsPath: tbl.Location() + "/metadata/p.parquet", FileSizeInBytes: 7}),
				table.NewAddSchemaUpdate(iceberg.NewSchema(1, append(testSchema.Fields(), iceberg.NestedField{ID: 9, Name: "extra", Type: iceberg.PrimitiveTypes.Float64})...)),
				table.NewSetCurrentSchemaUpdate(-1),
				table.NewSetPropertiesUpdate(iceberg.Properties{"another": "one"}),
			}
			meta, err := table.UpdateTableMetadata(tbl.Metadata(), updates, tbl.MetadataLocation())
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "refs, statistics, a new schema", c.MarshalMetadata, meta)
			if version == "3" {
				meta, err = table.UpdateTableMetadata(meta, []table.Update{table.NewAddEncryptionKeyUpdate(table.EncryptionKey{KeyID: "key-1", EncryptedKeyMetadata: "c2VjcmV0"})}, "")
				if err != nil {
					t.Fatal(err)
				}
				sameJSON(t, "an encryption key", c.MarshalMetadata, meta)
			}
			// expired snapshots leave the encoding, cached or not
			meta, err = table.UpdateTableMetadata(meta, []table.Update{table.NewRemoveSnapshotRefUpdate("v1"), table.NewRemoveSnapshotsUpdate([]int64{first}, false)}, "")
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "after expiry", c.MarshalMetadata, meta)
		})
	}
}

// A commit retried after a lost race keeps its snapshot id but rebuilds
// the snapshot (a new manifest list and sequence number): the encoding of
// the first attempt must not be reused.
func TestMetadataEncodingOfARetriedSnapshot(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "main", "retry")
	attempt := func(manifestList string, seq int64) table.Metadata {
		t.Helper()
		snap := table.Snapshot{SnapshotID: 42, SequenceNumber: seq, TimestampMs: tbl.Metadata().LastUpdatedMillis() + 1,
			ManifestList: tbl.Location() + "/metadata/" + manifestList, Summary: &table.Summary{Operation: table.OpAppend}}
		meta, err := table.UpdateTableMetadata(tbl.Metadata(), []table.Update{
			table.NewAddSnapshotUpdate(&snap),
			table.NewSetSnapshotRefUpdate("main", 42, table.BranchRef, -1, -1, -1),
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		return meta
	}
	first := attempt("snap-42-0-a.avro", 1)
	sameJSON(t, "first attempt", c.MarshalMetadata, first)
	second := attempt("snap-42-1-a.avro", 1)
	sameJSON(t, "second attempt", c.MarshalMetadata, second)
}

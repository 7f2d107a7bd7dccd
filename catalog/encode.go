package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
)

// metadataJSON is the Iceberg table metadata document (format versions 2
// and 3), field for field as iceberg-go writes it, but for the snapshots,
// which marshalMetadata splices in already encoded.
//
// Why: a metadata file lists every retained snapshot, and every commit
// writes a new file. Encoding a snapshot (its summary map above all) is
// most of the cost, and it grew with the history: at 1,000 snapshots,
// encoding was two thirds of an append's commit time. Snapshots never
// change once committed, so each is encoded once and its bytes reused.
type metadataJSON struct {
	FormatVersion      int                             `json:"format-version"`
	UUID               uuid.UUID                       `json:"table-uuid"`
	Loc                string                          `json:"location"`
	LastSequenceNumber int64                           `json:"last-sequence-number"`
	NextRowID          *int64                          `json:"next-row-id,omitempty"`
	LastUpdatedMS      int64                           `json:"last-updated-ms"`
	LastColumnID       int                             `json:"last-column-id"`
	SchemaList         []*iceberg.Schema               `json:"schemas"`
	CurrentSchemaID    int                             `json:"current-schema-id"`
	Specs              []iceberg.PartitionSpec         `json:"partition-specs"`
	DefaultSpecID      int                             `json:"default-spec-id"`
	LastPartitionID    *int                            `json:"last-partition-id,omitempty"`
	Props              iceberg.Properties              `json:"properties,omitempty"`
	CurrentSnapshotID  json.RawMessage                 `json:"current-snapshot-id,omitempty"` // null in v3 when none
	SnapshotLog        []table.SnapshotLogEntry        `json:"snapshot-log,omitempty"`
	MetadataLog        []table.MetadataLogEntry        `json:"metadata-log,omitempty"`
	SortOrderList      []table.SortOrder               `json:"sort-orders"`
	DefaultSortOrderID int                             `json:"default-sort-order-id"`
	SnapshotRefs       map[string]table.SnapshotRef    `json:"refs,omitempty"`
	StatisticsList     []table.StatisticsFile          `json:"statistics,omitempty"`
	PartitionStatsList []table.PartitionStatisticsFile `json:"partition-statistics,omitempty"`
	EncryptionKeyList  []table.EncryptionKey           `json:"encryption-keys,omitempty"`
}

// snapshotCacheEntries bounds the encoded snapshots kept, about 1 KB
// each: enough for a few tables with long histories.
const snapshotCacheEntries = 1 << 14

// snapshotJSON caches encoded snapshots by table UUID and snapshot
// content (snapshotKey).
type snapshotJSON struct {
	cache *lru.Cache[string, json.RawMessage]
}

func newSnapshotJSON() *snapshotJSON {
	c, err := lru.New[string, json.RawMessage](snapshotCacheEntries)
	if err != nil {
		// only for a non-positive size, which the constant is not
		panic(fmt.Sprintf("catalog: snapshot cache: %v (broken invariant)", err))
	}
	return &snapshotJSON{cache: c}
}

// marshalMetadata encodes meta as iceberg-go's MarshalJSON would, reusing
// the encoding of snapshots seen before. It falls back to MarshalJSON for
// format version 1 and for metadata whose snapshots cannot be listed.
func (sj *snapshotJSON) marshalMetadata(meta table.Metadata) ([]byte, error) {
	v := meta.Version()
	snaps := meta.Snapshots()
	if (v != 2 && v != 3) || (v == 3 && meta.LastPartitionSpecID() == nil) || !snapshotsComplete(meta, snaps) {
		if m, ok := meta.(json.Marshaler); ok {
			return m.MarshalJSON()
		}
		return json.Marshal(meta)
	}
	doc := metadataJSON{
		FormatVersion:      v,
		UUID:               meta.TableUUID(),
		Loc:                meta.Location(),
		LastSequenceNumber: meta.LastSequenceNumber(),
		LastUpdatedMS:      meta.LastUpdatedMillis(),
		LastColumnID:       meta.LastColumnID(),
		SchemaList:         meta.Schemas(),
		CurrentSchemaID:    meta.CurrentSchema().ID,
		Specs:              meta.PartitionSpecs(),
		DefaultSpecID:      meta.DefaultPartitionSpec(),
		LastPartitionID:    meta.LastPartitionSpecID(),
		Props:              meta.Properties(),
		SnapshotLog:        slices.Collect(meta.SnapshotLogs()),
		MetadataLog:        slices.Collect(meta.PreviousFiles()),
		SortOrderList:      meta.SortOrders(),
		DefaultSortOrderID: meta.DefaultSortOrder(),
		StatisticsList:     slices.Collect(meta.Statistics()),
		PartitionStatsList: slices.Collect(meta.PartitionStatistics()),
		EncryptionKeyList:  slices.Collect(meta.EncryptionKeys()),
	}
	if v >= 3 {
		n := meta.NextRowID()
		doc.NextRowID = &n
	}
	if cur := meta.CurrentSnapshot(); cur != nil {
		doc.CurrentSnapshotID = strconv.AppendInt(nil, cur.SnapshotID, 10)
	} else if v >= 3 {
		doc.CurrentSnapshotID = json.RawMessage("null")
	}
	for name, ref := range meta.Refs() {
		if doc.SnapshotRefs == nil {
			doc.SnapshotRefs = map[string]table.SnapshotRef{}
		}
		doc.SnapshotRefs[name] = ref
	}
	b, err := json.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	if len(snaps) == 0 {
		return b, nil
	}
	// Splice the snapshots in as the last member: json.Marshal would
	// re-scan every cached byte to validate and compact it.
	prefix := meta.TableUUID().String()
	out := make([]byte, 0, len(b)+len(snaps)*1024)
	out = append(out, b[:len(b)-1]...) // without the closing brace
	out = append(out, `,"snapshots":[`...)
	for i := range snaps {
		key := snapshotKey(prefix, &snaps[i])
		enc, ok := sj.cache.Get(key)
		if !ok {
			if enc, err = json.Marshal(&snaps[i]); err != nil {
				return nil, err
			}
			sj.cache.Add(key, enc)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, enc...)
	}
	return append(out, "]}"...), nil
}

// snapshotKey identifies one snapshot's content. The id alone is not
// enough: a commit that loses a race is retried with the same snapshot id
// but a rebuilt snapshot (a new manifest list, parent and sequence
// number), and reusing the first attempt's encoding would point the table
// at a manifest list that was never committed.
func snapshotKey(tableUUID string, s *table.Snapshot) string {
	parent := int64(-1)
	if s.ParentSnapshotID != nil {
		parent = *s.ParentSnapshotID
	}
	return fmt.Sprintf("%s/%d/%d/%d/%d/%s", tableUUID, s.SnapshotID, parent, s.SequenceNumber, s.TimestampMs, s.ManifestList)
}

// snapshotsComplete checks that the listed snapshots include every one the
// metadata points at (a failure to list them would otherwise write a
// table without its history).
func snapshotsComplete(meta table.Metadata, snaps []table.Snapshot) bool {
	ids := make(map[int64]bool, len(snaps))
	for i := range snaps {
		ids[snaps[i].SnapshotID] = true
	}
	if cur := meta.CurrentSnapshot(); cur != nil && !ids[cur.SnapshotID] {
		return false
	}
	for _, ref := range meta.Refs() {
		if !ids[ref.SnapshotID] {
			return false
		}
	}
	return true
}

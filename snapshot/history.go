package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Info describes one snapshot for users: `skade history`, .history, and the
// t$snapshots metadata table.
type Info struct {
	ID             int64
	ParentID       *int64
	SequenceNumber int64
	Committed      time.Time
	Operation      string
	// Summary is Iceberg's snapshot summary (added-records, ...).
	Summary map[string]string
	// Current is set on the table's current snapshot.
	Current bool
}

// FromSnapshot converts an iceberg-go snapshot.
func FromSnapshot(s *table.Snapshot, current int64) Info {
	info := Info{
		ID:             s.SnapshotID,
		ParentID:       s.ParentSnapshotID,
		SequenceNumber: s.SequenceNumber,
		Committed:      time.UnixMilli(s.TimestampMs).UTC(),
		Current:        s.SnapshotID == current,
	}
	if s.Summary != nil {
		info.Operation = string(s.Summary.Operation)
		info.Summary = maps.Clone(map[string]string(s.Summary.Properties))
	}
	return info
}

// History lists every snapshot the metadata still holds, oldest first.
func History(meta table.Metadata) []Info {
	var current int64 = -1
	if cs := meta.CurrentSnapshot(); cs != nil {
		current = cs.SnapshotID
	}
	snaps := meta.Snapshots()
	out := make([]Info, 0, len(snaps))
	for i := range snaps {
		out = append(out, FromSnapshot(&snaps[i], current))
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if c := a.Committed.Compare(b.Committed); c != 0 {
			return c
		}
		switch {
		case a.SequenceNumber < b.SequenceNumber:
			return -1
		case a.SequenceNumber > b.SequenceNumber:
			return 1
		}
		return 0
	})
	return out
}

// ErrSnapshotNotFound is wrapped when a time-travel target does not exist,
// either because it never did or because it was expired.
var ErrSnapshotNotFound = fmt.Errorf("snapshot not found")

// ByID finds a snapshot for time travel.
func ByID(meta table.Metadata, tableName string, id int64) (*table.Snapshot, error) {
	s := meta.SnapshotByID(id)
	if s == nil {
		return nil, fmt.Errorf("%w: table %s has no snapshot %d (it never existed or was expired); list snapshots with `skade history %s`",
			ErrSnapshotNotFound, tableName, id, tableName)
	}
	return s, nil
}

// AsOf finds the snapshot that was current at time t: the last snapshot
// of the current branch's history committed at or before t.
func AsOf(meta table.Metadata, tableName string, t time.Time) (*table.Snapshot, error) {
	ms := t.UnixMilli()
	var best *table.Snapshot
	oldest := "none"
	for entry := range meta.SnapshotLogs() {
		if meta.SnapshotByID(entry.SnapshotID) == nil {
			continue // expired
		}
		if oldest == "none" {
			oldest = time.UnixMilli(entry.TimestampMs).UTC().Format(time.RFC3339Nano)
		}
		if entry.TimestampMs <= ms {
			best = meta.SnapshotByID(entry.SnapshotID)
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: table %s has no snapshot at or before %s (oldest retained: %s)",
			ErrSnapshotNotFound, tableName, t.UTC().Format(time.RFC3339Nano), oldest)
	}
	return best, nil
}

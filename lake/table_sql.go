package lake

import (
	"context"
)

// SQL runs a read-only statement against this handle's snapshot: the
// table read under its name sees the pinned snapshot (other tables their
// current one). Writes are refused with ErrReadOnly: "table handle is
// read-only; use a session to write".
func (t *Table) SQL(ctx context.Context, query string, args ...any) (*Result, error) {
	s := t.lk.Session()
	s.readOnly = true
	if t.snap != nil {
		s.pinned = map[string]int64{t.Name(): t.snap.SnapshotID}
	}
	return s.SQL(ctx, query, args...)
}

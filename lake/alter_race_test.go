package lake_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/skadedb/skade/lake"
)

// alterRaces are ALTER TABLE statements that check the rows there, each
// with a write that breaks what it adds and a query counting such rows.
var alterRaces = []struct{ name, alter, racer, check string }{
	{"set not null", "ALTER TABLE t ALTER COLUMN v SET NOT NULL", "INSERT INTO t VALUES (9, NULL)",
		"SELECT count(*) FROM t WHERE v IS NULL"},
	{"check", "ALTER TABLE t ADD CONSTRAINT short CHECK (length(v) < 3)", "INSERT INTO t VALUES (9, 'long')",
		"SELECT count(*) FROM t WHERE length(v) >= 3"},
}

// A constraint added by ALTER TABLE (SET NOT NULL, a CHECK) is checked on
// the rows the transaction sees; a write committed after that check must
// not slip under it. The ALTER's commit asserts the snapshot it checked:
// it fails, and the table keeps the row and its old schema, or it checks
// again and refuses. Either way no committed row breaks a constraint.
func TestAlterConstraintRacesAWrite(t *testing.T) {
	ctx := context.Background()
	for _, tc := range alterRaces {
		t.Run(tc.name, func(t *testing.T) {
			lk, _, s := txLake(t)
			alterer := lk.Session()
			mustExec(t, alterer, "BEGIN; "+tc.alter)
			mustExec(t, s, tc.racer)
			err := alterer.Commit(ctx)
			if err == nil {
				t.Fatalf("the ALTER committed over a row it never checked")
			}
			var ce *lake.ConstraintError
			if !errors.Is(err, lake.ErrCommitConflict) && !errors.As(err, &ce) {
				t.Fatalf("commit: %v; want a conflict or a constraint error", err)
			}
			// the racing row is there, and a write like it still succeeds:
			// the constraint did not land
			if got := query(t, s, tc.check); !slices.Equal(got, []string{"1"}) {
				t.Errorf("%s = %v, want 1", tc.check, got)
			}
			mustExec(t, s, tc.racer)
			// run alone, the ALTER refuses the rows that break it
			if err := s.Exec(ctx, tc.alter); !errors.As(err, &ce) {
				t.Errorf("%s: %v; want a constraint error", tc.alter, err)
			}
		})
	}
}

// The same race without a transaction: another write commits after the
// ALTER checked the rows and before it commits. The ALTER must not land
// on a head it never checked (iceberg-go would replay its schema change
// there): it fails with a conflict, or checks the new rows and refuses.
func TestAlterConstraintRacesAWriteAutocommit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range alterRaces {
		t.Run(tc.name, func(t *testing.T) {
			lk, _, s := txLake(t)
			racer := lk.Session()
			// the first write to stage is the ALTER: the insert lands
			// between its check and its commit (and itself passes the
			// hook without racing anything: a sync.Once would wait)
			var started, raced atomic.Bool
			restore := lake.SetTestHookAfterStage(func() {
				if started.CompareAndSwap(false, true) {
					mustExec(t, racer, tc.racer)
					raced.Store(true)
				}
			})
			defer restore()
			err := s.Exec(ctx, tc.alter)
			if !raced.Load() {
				t.Fatal("the racing write never ran")
			}
			var ce *lake.ConstraintError
			if err == nil || !errors.Is(err, lake.ErrCommitConflict) && !errors.As(err, &ce) {
				t.Fatalf("ALTER: %v; want a conflict or a constraint error", err)
			}
			if got := query(t, s, tc.check); !slices.Equal(got, []string{"1"}) {
				t.Errorf("%s = %v, want 1", tc.check, got)
			}
			mustExec(t, s, tc.racer) // the constraint did not land
		})
	}
}

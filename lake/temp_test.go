package lake_test

import (
	"context"
	"strings"
	"testing"
)

// A temporary table belongs to the session that made it: another session
// of the same lake does not see it, and Close drops it.
func TestTemporaryTablesAreTheSessions(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	a, b := lk.Session(), lk.Session()
	mustExec(t, a, "CREATE TEMP TABLE delta AS SELECT i AS id FROM range(1000) r(i)")
	if got := query(t, a, "SELECT count(*), sum(id) FROM delta"); got[0] != "1000|499500" {
		t.Fatalf("session a reads %v", got)
	}
	if _, err := b.SQL(ctx, "SELECT * FROM delta"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("session b read a's temporary table: %v", err)
	}
	// b may make its own of that name
	mustExec(t, b, "CREATE TEMP TABLE delta AS SELECT 7 AS id")
	if got := query(t, b, "SELECT id FROM delta"); len(got) != 1 || got[0] != "7" {
		t.Fatalf("session b reads %v", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SQL(ctx, "SELECT * FROM delta"); err == nil {
		t.Fatal("the temporary table outlived Close")
	}
	if got := query(t, b, "SELECT id FROM delta"); len(got) != 1 || got[0] != "7" {
		t.Fatalf("a's Close changed b's table: %v", got)
	}
	// Unregister drops it too, for reads and writes alike
	b.Unregister("delta")
	if _, err := b.SQL(ctx, "SELECT * FROM delta"); err == nil {
		t.Fatal("Unregister left the temporary table readable")
	}
	if _, err := b.SQL(ctx, "INSERT INTO delta VALUES (1)"); err == nil || strings.Contains(err.Error(), "temporary") {
		t.Fatalf("after Unregister, a write still names the temporary table: %v", err)
	}
}

package lake_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// TestChangeFeedReplays runs random MERGEs, UPDATEs and DELETEs on a
// table with multi-row-group, multi-split files, in each write mode, and
// checks the change feed two ways at every commit:
//
//   - exact: the table at the commit's parent, minus the feed's deleted
//     rows and pre-images, plus its inserted rows and post-images, is the
//     table at the commit (read by time travel);
//   - no noise: the feed holds as many inserts, update pairs and deletes
//     as the statement reported, so no row a copy-on-write rewrite only
//     carried over appears.
func TestChangeFeedReplays(t *testing.T) {
	configs := []struct{ name, props string }{
		{"copy-on-write", ""},
		{"copy-on-write/partitioned", ""},
		{"merge-on-read", morWrites},
		{"deletion-vectors", morWrites + ", 'format-version' = '3'"},
	}
	for ci, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			ctx := context.Background()
			lk := sqlLake(t)
			s := lk.Session()
			part := ""
			if cfg.name == "copy-on-write/partitioned" {
				part = " PARTITIONED BY (bucket(4, k))"
			}
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE acct (k BIGINT, v BIGINT)%s WITH ('write.parquet.row-group-limit' = '7', 'read.split.target-size' = '1'%s)`, part, cfg.props))
			for w := range 4 {
				mustExec(t, s, fmt.Sprintf("INSERT INTO acct SELECT i, i FROM range(%d, %d) r(i)", w*100, (w+1)*100))
			}
			rnd := rand.New(rand.NewPCG(uint64(ci), 7))
			next := int64(1000)
			for range 12 {
				sql, _ := randomStatement(rnd, func() int64 { return int64(rnd.IntN(400)) }, func() int64 { next++; return next }, true)
				before := tableSnapshot(t, lk)
				res, err := s.SQL(ctx, sql)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				m := res.Metrics()
				res.Close()
				if m.SnapshotID == 0 {
					continue // nothing changed, nothing committed
				}
				feed := queryRows(t, s, fmt.Sprintf("SELECT k, v, _change_type FROM table_changes('acct', %d, %d, identifier_columns => 'k')", before, m.SnapshotID))
				state := rowsAt(t, s, before)
				kinds := map[string]int64{}
				for _, r := range feed {
					kinds[r.kind]++
					switch r.kind {
					case "delete", "update_preimage":
						if state[r.k] != r.v {
							t.Fatalf("%s: the feed deletes (%d, %d), which the table did not hold", sql, r.k, r.v)
						}
						delete(state, r.k)
					default:
						if _, dup := state[r.k]; dup {
							t.Fatalf("%s: the feed inserts key %d, which the table held", sql, r.k)
						}
						state[r.k] = r.v
					}
				}
				if after := rowsAt(t, s, m.SnapshotID); !maps.Equal(state, after) {
					t.Fatalf("%s: the table before plus the feed is not the table after\n feed %v", sql, feed)
				}
				if kinds["insert"] != m.RowsInserted || kinds["update_postimage"] != m.RowsUpdated || kinds["update_preimage"] != m.RowsUpdated || kinds["delete"] != m.RowsDeleted {
					t.Fatalf("%s: the feed has %v, the statement inserted %d, updated %d, deleted %d", sql, kinds, m.RowsInserted, m.RowsUpdated, m.RowsDeleted)
				}
			}
			// compaction changes no row: its commit has an empty feed
			before := tableSnapshot(t, lk)
			mustExec(t, s, "ALTER TABLE acct EXECUTE compact")
			if after := tableSnapshot(t, lk); after != before {
				if feed := queryRows(t, s, fmt.Sprintf("SELECT k, v, _change_type FROM table_changes('acct', %d)", before)); len(feed) > 0 {
					t.Fatalf("compaction's feed: %v", feed)
				}
			}
		})
	}
}

type feedRow struct {
	k, v int64
	kind string
}

func tableSnapshot(t *testing.T, lk *lake.Lake) int64 {
	t.Helper()
	tbl, err := lk.Table(context.Background(), "acct")
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Snapshot().ID
}

func queryRows(t *testing.T, s *lake.Session, sql string) []feedRow {
	t.Helper()
	res, err := s.SQL(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	bs, err := res.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []feedRow
	for _, b := range bs {
		ks, vs := b.Column(0).(*array.Int64), b.Column(1).(*array.Int64)
		var kinds *array.String
		if b.NumCols() > 2 {
			kinds = b.Column(2).(*array.String)
		}
		for i := range ks.Len() {
			r := feedRow{k: ks.Value(i), v: vs.Value(i)}
			if kinds != nil {
				r.kind = kinds.Value(i)
			}
			out = append(out, r)
		}
		b.Release()
	}
	return out
}

func rowsAt(t *testing.T, s *lake.Session, snap int64) map[int64]int64 {
	t.Helper()
	m := map[int64]int64{}
	for _, r := range queryRows(t, s, fmt.Sprintf("SELECT k, v FROM acct FOR VERSION AS OF %d", snap)) {
		if _, dup := m[r.k]; dup {
			t.Fatalf("key %d twice at snapshot %d", r.k, snap)
		}
		m[r.k] = r.v
	}
	return m
}

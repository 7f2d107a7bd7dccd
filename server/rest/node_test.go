package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/rest"
)

// TestNodeClients runs testdata/node/client.mjs against the server:
// iceberg-js (a REST client not written in Go) creates a namespace and a
// table and loads it, then icebird (an independent reader of Iceberg
// metadata, manifests and Parquet) reads, through the REST catalog, tables
// skade wrote by INSERT, copy-on-write MERGE, merge-on-read MERGE
// (position deletes), an equality-delete upsert, partition evolution,
// row lineage on v3, and a branch and a tag: it must see the rows skade
// read. It serves a relocated copy of the lake whose original is gone
// (skade relocate), so every path icebird follows was rewritten. It needs
// node and `npm ci --prefix server/rest/testdata/node`,
// which .ci/run does; without them it skips, unless SKADE_REQUIRE_NODE is
// set.
func TestNodeClients(t *testing.T) {
	node, err := exec.LookPath("node")
	_, modErr := os.Stat("testdata/node/node_modules/icebird/package.json")
	if err != nil || modErr != nil {
		if os.Getenv("SKADE_REQUIRE_NODE") != "" {
			t.Fatalf("node or the npm packages missing (npm ci --prefix server/rest/testdata/node): %v %v", err, modErr)
		}
		t.Skip("node or the npm packages (npm ci --prefix server/rest/testdata/node) are missing")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "orig")
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := lk.Session()
	script := `
CREATE TABLE ins (id BIGINT, v VARCHAR);
INSERT INTO ins VALUES (1, 'a'), (2, 'b'), (3, NULL);
CREATE TABLE cow (id BIGINT, v VARCHAR);
INSERT INTO cow SELECT range, 'v' || range FROM range(10);
MERGE INTO cow USING (SELECT range * 3 AS id FROM range(5)) s ON cow.id = s.id
  WHEN MATCHED AND s.id > 6 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new');
CREATE TABLE mor (id BIGINT, v VARCHAR) WITH ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read');
INSERT INTO mor SELECT range, 'v' || range FROM range(10);
MERGE INTO mor USING (SELECT range * 3 AS id FROM range(5)) s ON mor.id = s.id
  WHEN MATCHED AND s.id > 6 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new');
DELETE FROM mor WHERE id = 1;
CREATE TABLE eq (id BIGINT, v VARCHAR);
INSERT INTO eq SELECT range, 'v' || range FROM range(6);
CREATE TABLE evo (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)) WITH ('write.delete.mode' = 'merge-on-read');
INSERT INTO evo SELECT range, 'v' || range FROM range(8);
ALTER TABLE evo REPLACE PARTITION FIELD bucket(2, id) WITH truncate(2, v);
INSERT INTO evo SELECT range, 'w' || range FROM range(8, 12);
DELETE FROM evo WHERE id IN (1, 9);
CREATE TABLE lin (id BIGINT, v VARCHAR) WITH ('format-version' = '3');
INSERT INTO lin SELECT range, 'v' || range FROM range(6);
UPDATE lin SET v = 'updated' WHERE id % 2 = 0;
MERGE INTO lin USING (SELECT 7 AS id) s ON lin.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'seven');
CREATE TABLE br (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)) WITH ('write.delete.mode' = 'merge-on-read');
INSERT INTO br SELECT range, 'v' || range FROM range(8);
ALTER TABLE br CREATE BRANCH audit;
ALTER TABLE br CREATE TAG before;
MERGE INTO br.branch_audit t USING (SELECT range * 2 AS id FROM range(6)) s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new');
DELETE FROM br.branch_audit WHERE id = 1;
INSERT INTO br VALUES (100, 'main only');
CREATE TABLE rgc (id BIGINT, v VARCHAR) WITH ('write.parquet.row-group-limit' = '10');
INSERT INTO rgc SELECT range, 'v' || range FROM range(50);
MERGE INTO rgc USING (SELECT 23 AS id UNION ALL SELECT 60) s ON rgc.id = s.id
  WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new');
DELETE FROM rgc WHERE id BETWEEN 40 AND 44;
CREATE TABLE dct (id BIGINT, v VARCHAR, w DOUBLE) WITH ('write.parquet.row-group-limit' = '5000');
INSERT INTO dct SELECT range, CASE WHEN range % 7 = 0 THEN NULL WHEN range >= 15000 AND range % 5 = 0 THEN ''
  WHEN range >= 12000 AND range % 3 = 0 THEN 'c' WHEN range % 2 = 0 THEN 'a' ELSE 'b' END, range * 0.5 FROM range(20000);
MERGE INTO dct USING (SELECT range * 97 AS id FROM range(200)) s ON dct.id = s.id WHEN MATCHED THEN UPDATE SET v = 'merged', w = -1;
`
	if err := s.Exec(ctx, script); err != nil {
		t.Fatal(err)
	}
	eq, err := lk.Table(ctx, "eq")
	if err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{2, 4, 9}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"up2", "up4", "new9"}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	rec.Release()
	if _, err := eq.Upsert(ctx, []string{"id"}, rdr); err != nil {
		t.Fatal(err)
	}
	// br: a branch with a merge-on-read MERGE and DELETE, a tag, and a
	// write on main after them; each ref read on its own (name@ref)
	tables := []string{"main.ins", "main.cow", "main.mor", "main.eq", "main.evo", "main.lin", "main.br", "main.br@audit", "main.br@before", "main.rgc", "main.dct"}
	// read what skade sees, then serve a relocated copy of the lake with
	// the original gone: icebird reads every path the copy's metadata,
	// manifests and delete files hold
	want := map[string]string{}
	for _, name := range tables {
		from := name
		if base, ref, ok := strings.Cut(name, "@"); ok {
			from = base + " FOR VERSION AS OF '" + ref + "'"
		}
		want[name] = count(t, lk, "SELECT id, coalesce(v, 'NULL') FROM "+from+" ORDER BY id")
	}
	if n := count(t, lk, "SELECT count(*) FROM rgc$files WHERE file_path LIKE '%-rgcopy.parquet'"); n == "0" {
		t.Fatal("rgc has no row-group copy")
	}
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	lk, err = lake.Open(ctx, copyDir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	if _, err := lk.Relocate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	srv, err := rest.New(rest.Config{Lake: lk})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	// rgc: copy-on-write rewrites whose unchanged row groups were copied
	// verbatim into files with a footer skade wrote
	// dct: a copy-on-write rewrite by skade's own writer (string columns
	// dictionary-encoded by skade; two of three columns change, so no
	// row group is patched): 4 row groups, the first dictionary-encoded,
	// the others plain from where a new value or an empty string came
	// (checked by hand with a footer dump), and NULLs
	// evo: data files of two partition specs and position deletes; lin: a
	// v3 table whose copy-on-write rewrites carry _row_id and
	// _last_updated_sequence_number columns, which a reader must ignore
	abs, _ := filepath.Abs("testdata/node/client.mjs")
	cmd := exec.Command(node, append([]string{abs, hs.URL}, tables...)...)
	cmd.Dir = "testdata/node"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got struct {
		Created struct {
			Fields   []string `json:"fields"`
			Location string   `json:"location"`
		} `json:"created"`
		Tables map[string][]map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if fmt.Sprint(got.Created.Fields) != "[id what]" || got.Created.Location != "string" {
		t.Errorf("iceberg-js created %+v", got.Created)
	}
	if n := count(t, lk, "SELECT count(*) FROM fromjs.events"); n != "0" {
		t.Errorf("the table iceberg-js created: %s rows", n)
	}
	for _, name := range tables {
		var rows []string
		for _, r := range got.Tables[name] {
			v := "NULL"
			if r["v"] != nil {
				v = fmt.Sprint(r["v"])
			}
			rows = append(rows, fmt.Sprintf("%v,%s", r["id"], v))
		}
		sort.Slice(rows, func(i, j int) bool {
			var a, b int
			fmt.Sscan(strings.Split(rows[i], ",")[0], &a)
			fmt.Sscan(strings.Split(rows[j], ",")[0], &b)
			return a < b
		})
		if strings.Join(rows, ";") != want[name] {
			t.Errorf("%s: icebird read\n%s\nskade read\n%s", name, strings.Join(rows, ";"), want[name])
		}
	}
}

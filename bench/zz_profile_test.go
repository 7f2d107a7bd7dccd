package bench

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

func TestZZProfileMor(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	ctx := context.Background()
	n := 2_000_000
	lk, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	run := func(q string) {
		res, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		res.Close()
	}
	run("CREATE TABLE base (id BIGINT, status VARCHAR, amount DOUBLE)")
	for f := 0; f < 10; f++ {
		run(fmt.Sprintf("INSERT INTO base SELECT i, CASE i %% 5 WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c' WHEN 3 THEN 'd' ELSE 'e' END, i * 0.5 FROM range(%d, %d) r(i)", f*n/10, (f+1)*n/10))
	}
	run(fmt.Sprintf(`CREATE TABLE src AS SELECT i * 100 + 1 AS id, 'updated' AS status, (i * 1.5)::DOUBLE AS amount FROM range(0, %d) r(i)
		UNION ALL SELECT %d + i AS id, 'new' AS status, (i * 2.5)::DOUBLE AS amount FROM range(0, %d) r(i)`, n/100, 10*n, n/10))
	mode := os.Getenv("ZZ")
	var total time.Duration
	f, _ := os.Create("/tmp/zz.prof")
	for k := 0; k < 8; k++ {
		run(fmt.Sprintf("CREATE TABLE m%d CLONE base", k))
		run(fmt.Sprintf("ALTER TABLE m%d SET TBLPROPERTIES ('write.merge.mode' = '%s')", k, mode))
		if k == 1 {
			pprof.StartCPUProfile(f)
		}
		start := time.Now()
		run(fmt.Sprintf("MERGE INTO m%d t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status, amount = s.amount WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.status, s.amount)", k))
		if k >= 1 {
			total += time.Since(start)
		}
	}
	pprof.StopCPUProfile()
	t.Logf("%s: %.1f ms per MERGE", mode, float64(total.Milliseconds())/7)
}

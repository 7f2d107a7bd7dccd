package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/objstore"
)

// objLakes opens a lake on local disk and one in versitygw on loopback,
// each with a 1M-row table "target" in 10 files (id, amount, status),
// with amounts and statuses that compress about as little as real ones
// (about 17 MB of Parquet).
func objLakes(b *testing.B) (disk, s3 *lake.Lake) {
	s3test.Start(b)
	ctx := context.Background()
	disk, err := lake.Open(ctx, filepath.Join(b.TempDir(), "lake"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { disk.Close() })
	s3, err = lake.Open(ctx, "s3://"+s3test.Bucket+"/bench", lake.WithCatalogFile(filepath.Join(b.TempDir(), "catalog.db")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s3.Close() })
	for _, lk := range []*lake.Lake{disk, s3} {
		s := lk.Session()
		mustSQL(b, s, `CREATE TABLE target (id BIGINT, amount BIGINT, status VARCHAR)`)
		for f := range 10 {
			mustSQL(b, s, fmt.Sprintf(`INSERT INTO target SELECT i, (i * 2654435761) %% 1000000007, substr(md5(i::VARCHAR), 1, 8) FROM range(%d, %d) r(i)`, f*100_000, (f+1)*100_000))
		}
	}
	return disk, s3
}

func storeStats(lk *lake.Lake) objstore.StatsSnapshot {
	st, _ := lk.ObjectStoreStats()
	return st
}

// BenchmarkObjectStoreMerge runs the same MERGE on a 1M-row, 10-file
// table on local disk and in an S3-compatible server on loopback
// (versitygw), alternating, 5 rounds per iteration: a source of 10,000 existing keys
// spread over every file (1%) plus 1,000 new ones, WHEN MATCHED UPDATE,
// WHEN NOT MATCHED INSERT, copy-on-write, so every file is rewritten.
// Reports the medians over all rounds, their ratio, and the S3 lake's
// mean requests and bytes per MERGE.
func BenchmarkObjectStoreMerge(b *testing.B) {
	disk, s3 := objLakes(b)
	const rounds = 5
	var dt, st []time.Duration
	var per objstore.StatsSnapshot
	for i := 0; i < b.N; i++ {
		for r := range rounds {
			q := fmt.Sprintf(`MERGE INTO target t USING (SELECT i * 100 + %d AS id FROM range(0, 10000) r(i) UNION ALL SELECT 2000000 + %d * 1000 + i FROM range(0, 1000) r(i)) s
				ON t.id = s.id WHEN MATCHED THEN UPDATE SET amount = t.amount + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 0, 'new')`, r, i*rounds+r)
			start := time.Now()
			mustSQL(b, disk.Session(), q)
			dt = append(dt, time.Since(start))
			before := storeStats(s3)
			start = time.Now()
			mustSQL(b, s3.Session(), q)
			st = append(st, time.Since(start))
			d := storeStats(s3).Sub(before)
			per = objstore.StatsSnapshot{GETs: per.GETs + d.GETs, PUTs: per.PUTs + d.PUTs, BytesRead: per.BytesRead + d.BytesRead,
				BytesWritten: per.BytesWritten + d.BytesWritten, HEADs: per.HEADs + d.HEADs + d.Lists + d.Deletes, Cached: per.Cached + d.Cached}
		}
	}
	// medians over every round of every iteration, and mean requests
	slices.Sort(dt)
	slices.Sort(st)
	n := float64(len(st))
	b.ReportMetric(ms(dt[len(dt)/2]), "disk_ms")
	b.ReportMetric(ms(st[len(st)/2]), "s3_ms")
	b.ReportMetric(float64(st[len(st)/2])/float64(dt[len(dt)/2]), "s3/disk")
	b.ReportMetric(float64(per.GETs)/n, "s3_GETs/merge")
	b.ReportMetric(float64(per.PUTs)/n, "s3_PUTs/merge")
	b.ReportMetric(float64(per.BytesRead)/(1<<20)/n, "s3_MB_down/merge")
	b.ReportMetric(float64(per.BytesWritten)/(1<<20)/n, "s3_MB_up/merge")
	b.ReportMetric(float64(per.HEADs)/n, "s3_other_reqs/merge")
	b.ReportMetric(float64(per.Cached)/n, "s3_cached_reads/merge")
}

// BenchmarkObjectStorePointQuery looks up one id in the 10-file table in
// the store: file statistics prune nine files, and in the tenth only the
// footer and the projected column chunks are read. Reports GETs and
// bytes read per query against the table's data size.
func BenchmarkObjectStorePointQuery(b *testing.B) {
	_, s3 := objLakes(b)
	s := s3.Session()
	res, err := s.SQL(context.Background(), `SELECT sum(file_size_in_bytes), count(*) FROM target$files`)
	if err != nil {
		b.Fatal(err)
	}
	batches, err := res.Collect(context.Background())
	if err != nil || len(batches) != 1 {
		b.Fatal(err)
	}
	size, _ := strconv.ParseInt(batches[0].Column(0).ValueStr(0), 10, 64)
	files := batches[0].Column(1).ValueStr(0)
	batches[0].Release()
	b.ResetTimer()
	before := storeStats(s3)
	for i := 0; i < b.N; i++ {
		res, err := s.SQL(context.Background(), fmt.Sprintf(`SELECT amount, status FROM target WHERE id = %d`, 123_457+i))
		if err != nil {
			b.Fatal(err)
		}
		bs, err := res.Collect(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, x := range bs {
			n += int(x.NumRows())
			x.Release()
		}
		if n != 1 {
			b.Fatalf("point query found %d rows", n)
		}
	}
	d := storeStats(s3).Sub(before)
	b.ReportMetric(float64(d.GETs)/float64(b.N), "GETs/query")
	b.ReportMetric(float64(d.Cached)/float64(b.N), "cached_reads/query")
	b.ReportMetric(float64(d.BytesRead)/float64(b.N)/1024, "KB_read/query")
	b.ReportMetric(float64(size)/1024, "table_KB")
	b.Logf("table: %s files, %d bytes", files, size)
}

// BenchmarkObjectStoreLatency runs a point query and the copy-on-write
// MERGE of BenchmarkObjectStoreMerge on two lakes in the S3-compatible
// server behind a proxy that delays every GET (SKADE_S3_GET_DELAY,
// default 20ms, about a cloud store's first byte), one with the FS's
// metadata cache (objstore/tailcache.go) and one without, alternating.
// Reports each one's median and GETs per statement.
func BenchmarkObjectStoreLatency(b *testing.B) {
	srv := s3test.Start(b)
	proxy := s3test.NewProxy(b, srv.Endpoint)
	srv.SetEnv(b, proxy.URL)
	delay := 20 * time.Millisecond
	if v := os.Getenv("SKADE_S3_GET_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		delay = d
	}
	ctx := context.Background()
	var lakes [2]*lake.Lake
	for i, cfg := range []objstore.Config{{}, {TailCacheBytes: -1}} {
		lk, err := lake.Open(ctx, fmt.Sprintf("s3://%s/latency%d", s3test.Bucket, i), lake.WithCatalogFile(filepath.Join(b.TempDir(), "catalog.db")), lake.WithObjectStore(cfg))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { lk.Close() })
		s := lk.Session()
		mustSQL(b, s, `CREATE TABLE target (id BIGINT, amount BIGINT, status VARCHAR)`)
		for f := range 10 {
			mustSQL(b, s, fmt.Sprintf(`INSERT INTO target SELECT i, (i * 2654435761) %% 1000000007, substr(md5(i::VARCHAR), 1, 8) FROM range(%d, %d) r(i)`, f*100_000, (f+1)*100_000))
		}
		lakes[i] = lk
	}
	proxy.Faults(0, 0, delay, false)
	defer proxy.Faults(0, 0, 0, false)
	const rounds = 3
	var times [2][2][]time.Duration // lake, statement
	var gets [2][2]int64
	for i := 0; i < b.N; i++ {
		for r := range rounds {
			k := i*rounds + r
			stmts := [2]string{
				fmt.Sprintf(`SELECT amount, status FROM target WHERE id = %d`, 123_457+k),
				fmt.Sprintf(`MERGE INTO target t USING (SELECT i * 100 + %d AS id FROM range(0, 10000) r(i) UNION ALL SELECT 2000000 + %d * 1000 + i FROM range(0, 1000) r(i)) s
				ON t.id = s.id WHEN MATCHED THEN UPDATE SET amount = t.amount + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 0, 'new')`, r, k),
			}
			for q, stmt := range stmts {
				for l, lk := range lakes {
					before := storeStats(lk)
					start := time.Now()
					res, err := lk.Session().SQL(ctx, stmt)
					if err != nil {
						b.Fatal(err)
					}
					bs, err := res.Collect(ctx) // a query runs as it is read
					if err != nil {
						b.Fatal(err)
					}
					times[l][q] = append(times[l][q], time.Since(start))
					gets[l][q] += storeStats(lk).Sub(before).GETs
					rows := 0
					for _, x := range bs {
						rows += int(x.NumRows())
						x.Release()
					}
					if q == 0 && rows != 1 {
						b.Fatalf("the point query found %d rows", rows)
					}
				}
			}
		}
	}
	n := float64(b.N * rounds)
	for l, name := range []string{"cache", "nocache"} {
		for q, stmt := range []string{"point", "merge"} {
			slices.Sort(times[l][q])
			b.ReportMetric(ms(times[l][q][len(times[l][q])/2]), stmt+"_"+name+"_ms")
			b.ReportMetric(float64(gets[l][q])/n, stmt+"_"+name+"_GETs")
		}
	}
}

package lake_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/skadedb/skade/lake"
)

func TestRacingCommitsWithAssertion(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	base := mustAppend(t, mustCreate(t, lk, "events"), 0, 1000)
	before := allFiles(t, dir)

	// Two writers start from the same base snapshot.
	first := mustAppend(t, base, 1000, 2000, lake.AssertSnapshot())
	afterFirst := allFiles(t, dir)

	rdr := eventsReader(5000, 6000, 1000)
	defer rdr.Release()
	_, err := base.Append(ctx, rdr, lake.AssertSnapshot())
	if !errors.Is(err, lake.ErrCommitConflict) {
		t.Fatalf("second commit from the same base: got %v, want ErrCommitConflict", err)
	}
	if !strings.Contains(err.Error(), "retry") {
		t.Fatalf("conflict message should say to retry: %q", err.Error())
	}

	// The table holds exactly the first commit's rows.
	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Snapshot().ID != first.Snapshot().ID {
		t.Fatalf("head is %d, want the first writer's %d", cur.Snapshot().ID, first.Snapshot().ID)
	}
	r2, err := cur.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, r2), expectedSums(0, 2000); got != want {
		t.Fatalf("table after race:\n got %s\nwant %s", describe(got), describe(want))
	}

	// The loser's files are gone: the directory holds what it held after
	// the winner's commit, nothing more.
	afterLoser := allFiles(t, dir)
	for p := range afterLoser {
		if !afterFirst[p] && filepath.Base(p) != "catalog.db" {
			t.Errorf("loser left %s behind", p)
		}
	}
	if len(afterFirst) <= len(before) {
		t.Fatalf("the winner wrote no files? before=%d after=%d", len(before), len(afterFirst))
	}
}

func TestRacingCommitsWithoutAssertionBothLand(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	base := mustAppend(t, mustCreate(t, lk, "events"), 0, 1000)

	mustAppend(t, base, 1000, 2000)
	mustAppend(t, base, 2000, 3000) // same stale base: refresh and replay

	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(history(t, cur)); n != 3 {
		t.Fatalf("history has %d snapshots, want 3", n)
	}
	rdr, err := cur.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, rdr), expectedSums(0, 3000); got != want {
		t.Fatalf("after two appends from one base:\n got %s\nwant %s", describe(got), describe(want))
	}
}

func TestConcurrentAppendsInOneProcess(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	mustCreate(t, lk, "events")
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tbl, err := lk.Table(ctx, "events")
				if err != nil {
					errs <- err
					return
				}
				lo := int64((w*each + i) * 100)
				rdr := eventsReader(lo, lo+100, 100)
				_, err = tbl.Append(ctx, rdr)
				rdr.Release()
				if err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(history(t, cur)); n != writers*each {
		t.Fatalf("history has %d snapshots, want %d", n, writers*each)
	}
	rdr, err := cur.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, rdr), expectedSums(0, writers*each*100); got != want {
		t.Fatalf("after concurrent appends:\n got %s\nwant %s", describe(got), describe(want))
	}
}

// TestTwoProcesses runs two OS processes that each append 50 times to one
// lake. The child processes are this test binary, re-executed.
func TestTwoProcesses(t *testing.T) {
	if dir := os.Getenv("SKADE_TEST_CHILD_LAKE"); dir != "" {
		t.Skip("child process")
	}
	ctx := context.Background()
	lk, dir := openLake(t)
	// Each child appends in a tight loop, so on a loaded machine the
	// slower one can lose the race more than the default 8 times in a row
	// (each retry waits at least 100 ms while the other commits every few
	// ms): the test is that every append lands given enough retries.
	mustCreate(t, lk, "events", lake.WithProperties(map[string]string{"commit.retry.num-retries": "50"}))

	const perProcess = 50
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildAppender$", "-test.v")
			cmd.Env = append(os.Environ(),
				"SKADE_TEST_CHILD_LAKE="+dir,
				"SKADE_TEST_CHILD_BASE="+strconv.Itoa(p*perProcess*10),
				"SKADE_TEST_CHILD_N="+strconv.Itoa(perProcess))
			outs[p], errs[p] = cmd.CombinedOutput()
		}(p)
	}
	wg.Wait()
	for p := 0; p < 2; p++ {
		if errs[p] != nil || !strings.Contains(string(outs[p]), "CHILD-DONE") {
			t.Fatalf("child %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(history(t, cur)); n != 2*perProcess {
		t.Fatalf("history has %d snapshots, want %d", n, 2*perProcess)
	}
	rdr, err := cur.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, rdr), expectedSums(0, 2*perProcess*10); got != want {
		t.Fatalf("after two processes:\n got %s\nwant %s", describe(got), describe(want))
	}
}

// TestChildAppender is the child half of TestTwoProcesses.
func TestChildAppender(t *testing.T) {
	dir := os.Getenv("SKADE_TEST_CHILD_LAKE")
	if dir == "" {
		t.Skip("only runs as TestTwoProcesses's child")
	}
	base, _ := strconv.Atoi(os.Getenv("SKADE_TEST_CHILD_BASE"))
	n, _ := strconv.Atoi(os.Getenv("SKADE_TEST_CHILD_N"))
	ctx := context.Background()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	for i := 0; i < n; i++ {
		tbl, err := lk.Table(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		lo := int64(base + i*10)
		rdr := eventsReader(lo, lo+10, 10)
		_, err = tbl.Append(ctx, rdr)
		rdr.Release()
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	t.Log("CHILD-DONE")
}

package catalog_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

const (
	envChildLake = "SKADE_CATALOG_TEST_CHILD_LAKE"
	envChildID   = "SKADE_CATALOG_TEST_CHILD_ID"
	childAppends = 10
)

// TestTwoProcesses runs two OS processes that append to one table of one
// lake at the same time; with retries on, every append lands.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	_, lake := lakeUnder(t)
	c := openLake(t, lake)
	_, err := c.CreateTable(ctx, table.Identifier{"t"}, testSchema, withProps(iceberg.Properties{
		table.CommitNumRetriesKey:  "50",
		"commit.retry.min-wait-ms": "5",
		"commit.retry.max-wait-ms": "200",
	}))
	if err != nil {
		t.Fatal(err)
	}

	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildAppender$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envChildLake+"="+lake, envChildID+"="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	checkRows(t, c, "t", 2*childAppends*2, 2*childAppends)
}

// TestChildAppender is the body of one process of TestTwoProcesses.
func TestChildAppender(t *testing.T) {
	lake := os.Getenv(envChildLake)
	if lake == "" {
		t.Skip("helper process of TestTwoProcesses")
	}
	id, _ := strconv.Atoi(os.Getenv(envChildID))
	c, err := catalog.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	for j := range childAppends {
		tbl, err := c.LoadTable(ctx, table.Identifier{"t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := appendRows(t, tbl, int64(id*1000+j*2), 2); err != nil {
			t.Fatalf("append %d: %v", j, err)
		}
	}
}

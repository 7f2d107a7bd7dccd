package snapshot

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The backoff between retries stays within [min, min(max, min·2^attempt)]
// and spreads: writers that lost to one commit do not all wait alike.
func TestRetryBackoffBounds(t *testing.T) {
	p := RetryPolicyOf(iceberg.Properties{table.CommitMinRetryWaitMsKey: "5", table.CommitMaxRetryWaitMsKey: "500"}, 1)
	if p.Min != 5*time.Millisecond || p.Max != 500*time.Millisecond {
		t.Fatalf("policy %+v", p)
	}
	for attempt := 0; attempt < 40; attempt++ {
		hi := min(p.Max, p.Min<<min(attempt, 30))
		seen := map[time.Duration]bool{}
		for range 200 {
			w := p.Wait(attempt)
			if w < p.Min || w > hi {
				t.Fatalf("attempt %d: waited %s, want within [%s, %s]", attempt, w, p.Min, hi)
			}
			seen[w] = true
		}
		if attempt > 0 && len(seen) < 50 {
			t.Fatalf("attempt %d: only %d distinct waits in 200: no jitter", attempt, len(seen))
		}
	}
	zero := RetryPolicyOf(iceberg.Properties{table.CommitMinRetryWaitMsKey: "0", table.CommitMaxRetryWaitMsKey: "0"}, 2)
	if w := zero.Wait(5); w != 0 {
		t.Fatalf("min = max = 0 must retry at once, waited %s", w)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	p := RetryPolicyOf(iceberg.Properties{table.CommitMinRetryWaitMsKey: "-3", table.CommitMaxRetryWaitMsKey: "x", table.CommitTotalRetryTimeoutMsKey: "2000"}, 3)
	if p.Min != table.CommitMinRetryWaitMsDefault*time.Millisecond || p.Max != table.CommitMaxRetryWaitMsDefault*time.Millisecond || p.Total != 2*time.Second {
		t.Fatalf("policy %+v", p)
	}
	// max below min is raised to min
	if p := RetryPolicyOf(iceberg.Properties{table.CommitMinRetryWaitMsKey: "50", table.CommitMaxRetryWaitMsKey: "10"}, 4); p.Max != p.Min {
		t.Fatalf("policy %+v", p)
	}
}

func TestWriteMode(t *testing.T) {
	props := iceberg.Properties{PropDeleteMode: ModeMergeOnRead, PropMergeMode: ModeCopyOnWrite}
	for op, want := range map[string]string{"delete": ModeMergeOnRead, "update": ModeCopyOnWrite, "merge": ModeCopyOnWrite} {
		if got := WriteMode(props, op); got != want {
			t.Errorf("%s: %s, want %s", op, got, want)
		}
	}
	if got := WriteMode(iceberg.Properties{PropUpdateMode: ModeMergeOnRead}, "update"); got != ModeMergeOnRead {
		t.Errorf("update: %s", got)
	}
}

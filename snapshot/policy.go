package snapshot

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// WriteMode is the write path a table's properties choose for op, one of
// "delete", "update" and "merge": ModeCopyOnWrite or ModeMergeOnRead
// (write.delete.mode, write.update.mode, write.merge.mode). An UPDATE …
// FROM, which runs as a MERGE, asks for "update".
func WriteMode(props iceberg.Properties, op string) string {
	key := opProperty(op, PropMergeMode, PropUpdateMode, PropDeleteMode)
	if props.Get(key, ModeCopyOnWrite) == ModeMergeOnRead {
		return ModeMergeOnRead
	}
	return ModeCopyOnWrite
}

// RetryPolicy is how long a write that lost a commit race waits before it
// is planned and run again: Iceberg's commit.retry.min-wait-ms,
// commit.retry.max-wait-ms and commit.retry.total-timeout-ms. Retrying at
// once made contending writers collide again and again (BENCHMARKS.md,
// contended MERGE).
type RetryPolicy struct {
	Min, Max, Total time.Duration
	rand            *rand.Rand
}

// RetryPolicyOf reads the policy from a table's properties, falling back
// to iceberg-go's defaults for properties it lacks or cannot read. seed
// seeds the jitter.
func RetryPolicyOf(props iceberg.Properties, seed uint64) RetryPolicy {
	ms := func(key string, def time.Duration) time.Duration {
		v, err := strconv.ParseInt(props[key], 10, 64)
		if err != nil || v < 0 {
			return def
		}
		return time.Duration(v) * time.Millisecond
	}
	p := RetryPolicy{rand: rand.New(rand.NewPCG(seed, 0x5eed))}
	p.Min = ms(table.CommitMinRetryWaitMsKey, table.CommitMinRetryWaitMsDefault*time.Millisecond)
	p.Max = max(ms(table.CommitMaxRetryWaitMsKey, table.CommitMaxRetryWaitMsDefault*time.Millisecond), p.Min)
	p.Total = ms(table.CommitTotalRetryTimeoutMsKey, table.CommitTotalRetryTimeoutMsDefault*time.Millisecond)
	return p
}

// Wait is a full-jitter exponential backoff before retry attempt+1:
// uniform in [Min, min(Max, Min·2^attempt)], so that writers that lost to
// the same commit spread out.
func (p RetryPolicy) Wait(attempt int) time.Duration {
	hi := p.Min << min(attempt, 30)
	if hi > p.Max || hi <= 0 {
		hi = p.Max
	}
	if hi <= p.Min {
		return p.Min
	}
	r := p.rand
	if r == nil {
		r = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))
	}
	return p.Min + time.Duration(r.Int64N(int64(hi-p.Min)+1))
}

// Sleep waits d, or until ctx is done, and then returns ctx's error: the
// pause between the attempts of a write that lost a commit race.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

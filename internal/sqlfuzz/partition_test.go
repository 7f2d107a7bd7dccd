package sqlfuzz

import (
	"strings"
	"testing"
)

// Some tables of most seeds are partitioned in skade's copy, by a clause
// on one of their own columns, and only their CREATE TABLE changes.
func TestPartitioningApplies(t *testing.T) {
	partitioned := 0
	for seed := uint64(1); seed <= 50; seed++ {
		s := NewGen(seed).Schema()
		parts := Partitioning(seed, s)
		sk := skadeSetup(s, parts)
		changed := 0
		for i := range sk {
			if sk[i] == s.Setup[i] {
				continue
			}
			changed++
			if !strings.HasPrefix(sk[i], s.Setup[i]+" PARTITIONED BY (") {
				t.Fatalf("seed %d: %q became %q", seed, s.Setup[i], sk[i])
			}
		}
		if changed != len(parts) {
			t.Fatalf("seed %d: %d statements changed for %d partitioned tables", seed, changed, len(parts))
		}
		partitioned += len(parts)
	}
	if partitioned < 30 {
		t.Fatalf("only %d partitioned tables in 50 seeds", partitioned)
	}
}

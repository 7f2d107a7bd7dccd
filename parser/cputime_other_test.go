//go:build !unix

package parser_test

import "time"

// processCPU is unavailable here; the benchmarks then report no CPU metric.
func processCPU() time.Duration { return 0 }

//go:build unix

package parser_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used. On a
// shared machine it is a steadier measure of the parser's cost than wall time;
// it includes the garbage collector's work on other threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

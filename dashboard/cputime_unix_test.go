//go:build unix

package dashboard

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (user and system, all
// threads): a benchmark on a machine shared with other work reports it
// beside ns/op, which counts the time spent waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

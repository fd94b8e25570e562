package exporttest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// BenchmarkBodies runs each benchmark body once, for
// TestBenchmarksReportAllocs.
func BenchmarkBodies(b *testing.B) {
	var p resilience.Policy[int] // the zero policy: OK alone
	b.Run("Do", func(b *testing.B) { exporttest.BenchDo(b, p) })
	b.Run("BreakerClosed", func(b *testing.B) { exporttest.BenchBreakerClosed(b, p) })
	b.Run("Observe", func(b *testing.B) {
		exporttest.BenchObserve(b, telemetry.ObserverFunc(func(telemetry.Event) {}), errors.New("down"))
	})
	b.Run("Paired", func(b *testing.B) { exporttest.BenchBreakerClosedPaired(b, p) })
}

// TestBenchmarksReportAllocs: every benchmark body reports its
// allocations (b.ReportAllocs): each result line of go test -bench, run
// in a child process of this test binary, has allocs/op.
func TestBenchmarksReportAllocs(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkBodies$", "-test.benchtime=1x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	results := 0
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "BenchmarkBodies/") {
			continue
		}
		results++
		if !strings.Contains(l, "allocs/op") {
			t.Errorf("no allocs/op in %q", l)
		}
	}
	if results != 6 { // Do, BreakerClosed/bare, /exported, Observe/refused, /waiting, Paired
		t.Errorf("%d result lines, want 6:\n%s", results, out)
	}
}

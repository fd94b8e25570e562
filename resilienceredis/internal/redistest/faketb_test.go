package redistest

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"testing"
)

// fakeTB is a testing.TB whose Skip and Fatal end the calling goroutine
// and are recorded, for tests of how the package fails or skips a test.
// The rest (TempDir, Cleanup, Helper, ...) is the real test's.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	skip   []string
	failed []string
}

func (f *fakeTB) record(to *[]string, s string) {
	f.mu.Lock()
	*to = append(*to, s)
	f.mu.Unlock()
}

func (f *fakeTB) Skip(args ...any)  { f.record(&f.skip, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatal(args ...any) { f.record(&f.failed, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.record(&f.failed, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// run calls fn with a fakeTB on a goroutine of its own and returns what
// it skipped and failed with.
func run(t *testing.T, fn func(tb testing.TB)) (skip, failed []string) {
	t.Helper()
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.skip, f.failed
}

// lookPath is exec.LookPath, for the tests that change PATH.
var lookPath = exec.LookPath

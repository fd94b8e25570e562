package redistest

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Eventually returns as soon as cond holds, polling every 2ms; if it
// never does within the bound it fails the test with msg and what cond
// last said (here on a synctest bubble's clock).
func TestEventually(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		start := time.Now()
		_, failed := run(t, func(tb testing.TB) {
			Eventually(tb, time.Second, "third call", func() (bool, string) {
				calls++
				return calls == 3, ""
			})
		})
		if len(failed) != 0 || calls != 3 || time.Since(start) != 4*time.Millisecond {
			t.Errorf("cond true at the third call: failed %q after %d calls and %v, want no failure after 3 calls and 4ms", failed, calls, time.Since(start))
		}

		calls = 0
		start = time.Now()
		_, failed = run(t, func(tb testing.TB) {
			Eventually(tb, 100*time.Millisecond, "never", func() (bool, string) {
				calls++
				// A bound for failure only: 100ms of 2ms polls is about 50
				// calls. Polls that do not wait would spin for ever on the
				// bubble's clock, which then never moves: end them.
				return calls > 1000, fmt.Sprint("call ", calls)
			})
		})
		want := []string{fmt.Sprintf("never: not within 100ms: call %d", calls)}
		if diff := cmp.Diff(want, failed); diff != "" || time.Since(start) != 100*time.Millisecond || calls < 40 {
			t.Errorf("cond never true: after %v and %d calls, failures mismatch (-want +got):\n%s", time.Since(start), calls, diff)
		}
	})
}

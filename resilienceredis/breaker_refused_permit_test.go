package resilienceredis

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The Permit returned with a refusal reports nothing, like the zero
// Permit: a caller that reports the outcome of every Allow (a refused
// call's success, here) changes neither the batch nor the counts of
// outcomes dropped, whether its instance refused for its own hold, an
// open shared state, or while deciding alone.
func TestBreakerRefusedPermitReportsNothing(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(2), WithCooldown(time.Hour))
	b.sync()
	fail(b)
	fail(b) // the instance holds its calls
	refusedDone := func(how string) {
		t.Helper()
		p, err := b.Allow()
		if !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("%s: Allow = %v, want ErrOpen", how, err)
		}
		q := &b.batch
		n, succ, dropped := q.n, q.succ, q.dropped
		p.Done(nil)
		p.Done(errBoom)
		if q.n != n || q.succ != succ || q.dropped != dropped {
			t.Errorf("%s: a refused permit's reports: batch of %d outcomes (%d successes), %d dropped; want %d, %d, %d as before",
				how, q.n, q.succ, q.dropped, n, succ, dropped)
		}
	}
	refusedDone("held")

	f.set(func(string, []any) ([]any, error) { return brReply(7, 2, 1, time.Hour, 0), nil })
	b.sync() // the fleet tripped: open for an hour
	refusedDone("open")
}

package resilienceredis

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// Every trial's report is sent, even when a trial of a later generation
// reports before the flusher has sent an earlier one's: with MaxTrials 1,
// a trial expires (TrialTimeout), reports late, and the next trial,
// admitted in a later half-open generation, reports before the flusher
// runs. Its success closes the breaker once the pending reports are sent.
// The instance has no goroutines: the test sends what is pending, and
// moves the instance's and the server's clocks.
func TestBreakerKeepsEveryTrialReport(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(1), WithCooldown(time.Hour), WithMaxTrials(1))
	advance := func(d time.Duration) {
		a.skew.Add(int64(d))
		a.shift.Add(d.Microseconds())
	}
	a.sync()
	fail(a)
	a.flush()
	if s := a.State(); s != breaker.Open {
		t.Fatalf("after a failure (Threshold 1): %v, want open", s)
	}
	advance(2 * time.Hour) // past the cooldown
	p1, err := a.Allow()
	if err != nil || p1.member == "" {
		t.Fatalf("past the cooldown: %v (trial %q), want a trial", err, p1.member)
	}
	advance(4*time.Hour + time.Second) // the trial expired, the breaker opened again, and its cooldown passed
	p1.Done(nil)                       // late: its generation is gone
	p2, err := a.Allow()
	if err != nil || p2.member == "" {
		t.Fatalf("past the second cooldown: %v (trial %q), want a trial", err, p2.member)
	}
	p2.Done(nil)
	sent := 0
	for range 4 {
		select {
		case r := <-a.reports:
			a.sendReport(r)
			sent++
			continue
		default:
		}
		break
	}
	if sent != 2 {
		t.Errorf("%d trial reports pending, want 2 (the late one and the success)", sent)
	}
	if got := sharedState(t, newClient(t), prefix); got["st"] != "0" {
		t.Errorf("after the second trial's success was sent (SuccessThreshold 1): shared st %s, want 0 (closed)", got["st"])
	}
}

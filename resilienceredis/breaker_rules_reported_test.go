package resilienceredis

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// mismatches returns the rules mismatches b has queued for
// OnRulesMismatch.
func brMismatches(b *Breaker) int {
	b.eventsMu.Lock()
	defer b.eventsMu.Unlock()
	n := 0
	for _, e := range b.events {
		if e.mismatch != nil {
			n++
		}
	}
	return n
}

// OnRulesMismatch is called when the instance learns of another
// instance's rules, and again when those rules change: not at every
// round trip that reports the same rules, nor when they are no longer
// seen.
func TestBreakerRulesMismatchReportedOnChange(t *testing.T) {
	b, f := brFakeBreaker(t, WithOnRulesMismatch(func(error) {}))
	rules := func(r string) {
		f.set(func(string, []any) ([]any, error) {
			return []any{int64(7), int64(1), int64(0), int64(0), int64(0), r}, nil
		})
		b.sync()
	}
	for _, step := range []struct {
		rules string
		want  int
	}{{"", 0}, {"x", 1}, {"x", 1}, {"x", 1}, {"", 1}, {"", 1}, {"x", 2}, {"y", 3}, {"y", 3}} {
		rules(step.rules)
		if got := brMismatches(b); got != step.want {
			t.Fatalf("after a reply of other rules %q: %d calls of OnRulesMismatch, want %d", step.rules, got, step.want)
		}
	}
}

// Another instance's rules are reported while they were seen within three
// times (ProbeInterval plus FlushInterval): 3s after, with both 1s, they
// still are.
func TestBreakerRulesMismatchHorizon(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	opts := []BreakerOption{WithProbeInterval(time.Second), WithFlushInterval(time.Second)}
	a := manual(t, addr, prefix, append(opts, WithThreshold(3))...)
	b := manual(t, addr, prefix, append(opts, WithThreshold(4))...)
	b.sync()
	a.shift.Store((3 * time.Second).Microseconds())
	a.sync()
	if err := a.RulesMismatch(); err == nil {
		t.Errorf("A, 3s after B's rules were seen (horizon 6s): RulesMismatch nil, want B's rules")
	}
}

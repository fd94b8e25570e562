package ratelimit

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// A step reckoned on a bucket that a change has since replaced must not
// land: the change read the bucket's TAT to make the new one, so a step
// that landed on the old one afterwards would take tokens the new bucket
// never counts. The old bucket is sealed: the step reports it replaced
// (the caller retries on the new bucket), and giving tokens back to it
// does nothing.
func TestStepOnAReplacedBucket(t *testing.T) {
	fake := clock.NewFake()
	l := New(1, 2, WithClock(fake))
	old := l.cur.Load()
	lo, hi := old.p.now()
	l.SetRate(2) // seals old: the new bucket holds its 2 tokens
	if _, _, r := old.admit(lo, hi, old.p.inc, 0); r != replaced {
		t.Fatalf("a step on the replaced bucket: outcome %d, want replaced", r)
	}
	old.giveBack(old.p.tau, old.p.inc, 0)
	if got := l.Tokens(); got != 2 {
		t.Fatalf("Tokens() = %v, want the 2 the bucket had", got)
	}
	if l.cur.Load() == old || old.tat.Load() != sealed {
		t.Fatal("the old bucket is still current or not sealed")
	}
	// The Limiter's own calls retry on the new bucket.
	if !l.AllowN(2) || l.Allow() {
		t.Fatal("want the 2 tokens, then none")
	}
	fake.Advance(500 * time.Millisecond) // one at the new rate
	if !l.Allow() {
		t.Fatal("no token 500ms after at 2 per second")
	}
}

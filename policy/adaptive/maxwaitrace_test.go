package adaptive_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A caller admitted at the very instant its MaxWait ends is either
// admitted or refused with the queue timeout, never both: whichever its
// wait sees first, the slot is held once or handed on, and nothing stays
// queued. (Which one it sees is the scheduler's choice: the test tries
// many times.)
func TestAdmittedAsMaxWaitEnds(t *testing.T) {
	for i := range 50 {
		bubble(t, func(t *testing.T) {
			lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(1),
				adaptive.WithMaxWait(100*time.Millisecond))
			first := hold(t, lim, 1)[0]
			w := queueUp(lim, "w", adaptive.Normal)
			time.Sleep(100 * time.Millisecond)
			first.Done(nil)
			switch got := w.state(); got {
			case "admitted":
				w.permit.Done(nil)
			case "adaptive: full, MaxWait spent in the queue":
			default:
				t.Fatalf("attempt %d: %q, want admitted or the queue timeout", i, got)
			}
			if s := lim.Stats(); s.InFlight != 0 || s.Queued != 0 {
				t.Fatalf("attempt %d: Stats %+v, want none in flight or queued", i, s)
			}
		})
	}
}

package breaker

import (
	"fmt"
	"math"

	"github.com/f0b5b96b/resilience"
)

// SetThreshold sets the consecutive-failures trip rule ([Config.Threshold])
// while the breaker runs, from the next failure on: n consecutive failures
// trip the breaker (n in [1, 4294967295]); [resilience.Off] (-1) switches
// the rule off. The breaker's state is kept: an open breaker
// stays open for the rest of its cooldown, a closed one keeps the failures
// counted so far, so lowering the threshold to or below the current streak
// trips the breaker at its next failure. The other settings cannot change
// while a breaker runs.
//
// SetThreshold is safe to call at any time, from any goroutine; it takes
// the breaker's lock briefly. It panics if n is outside the range above,
// naming the value, as [WithThreshold] does (0 too: the default of a
// Config's 0 depends on the other rules; give 5 or Off), and if b belongs
// to a [Keyed]
// (whose breakers share one configuration).
func (b *Breaker) SetThreshold(n int) {
	if n != resilience.Off && (n < 1 || uint64(n) > math.MaxUint32) {
		panic(fmt.Sprintf("breaker: SetThreshold(%d): the threshold must be in [1, %d], or resilience.Off for no consecutive-failures rule", n, uint32(math.MaxUint32)))
	}
	if b.cfg.regroup != nil {
		panic("breaker: SetThreshold on a Keyed's breaker: the breakers of a Keyed share one configuration")
	}
	var t uint64 // 0: no rule
	if n > 0 {
		t = uint64(n)
	}
	b.mu.Lock()
	b.cfg.threshold = t // read only by tripsLocked, under b.mu
	b.mu.Unlock()
}

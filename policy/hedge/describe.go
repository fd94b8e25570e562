package hedge

import (
	"time"

	"github.com/f0b5b96b/resilience"
)

// describe returns the description of a hedge made from the configuration
// c (MaxHedges resolved), for resilience's Check and Bounds: a quantile
// delay is bounded by its MaxDelay, or not at all; a MaxWait of 0 means
// the fixed Delay, as waitsFor reads it.
func describe[T any](c Config[T]) resilience.Layer {
	delay := c.Delay
	if c.Quantile > 0 {
		delay = time.Duration(resilience.Off)
		if c.MaxDelay > 0 {
			delay = c.MaxDelay
		}
	}
	maxWait := c.MaxWait
	if maxWait == 0 {
		maxWait = c.Delay
	}
	return resilience.Layer{Kind: resilience.KindHedge, Attempts: 1 + c.MaxHedges, Delay: delay,
		MaxWait: maxWait, Budget: c.Budget > 0}
}

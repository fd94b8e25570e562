package retry

import "github.com/f0b5b96b/resilience"

// describe attaches to p, the layer New made from the resolved c, its
// description for resilience's Check and Bounds.
func describe[T any](c Config, p resilience.Policy[T]) resilience.Policy[T] {
	maxWait := c.MaxWait
	if maxWait == resilience.Never {
		maxWait = resilience.Off
	}
	return p.Describe(resilience.Layer{Kind: resilience.KindRetry, Attempts: c.Attempts,
		MaxElapsed: c.MaxElapsed, MaxWait: maxWait, Budget: c.Budget != nil})
}

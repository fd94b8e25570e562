package throttle

import "github.com/f0b5b96b/resilience"

// describe attaches to p, a throttler's layer, its description for
// resilience's Check and Bounds: it calls the rest of the chain at most
// once and never waits, and no order rule names it.
func describe[T any](p resilience.Policy[T]) resilience.Policy[T] {
	return p.Describe(resilience.Layer{Kind: resilience.KindOther})
}

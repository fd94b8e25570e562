package breaker

import "github.com/f0b5b96b/resilience"

// describe attaches to p, a breaker's layer, its description for
// resilience's Check and Bounds: a breaker adds no call and no wait.
func describe[T any](p resilience.Policy[T]) resilience.Policy[T] {
	return p.Describe(resilience.Layer{Kind: resilience.KindBreaker})
}

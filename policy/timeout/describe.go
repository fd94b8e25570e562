package timeout

import "github.com/f0b5b96b/resilience"

// describe attaches to p, the layer New made from c, its description for
// resilience's Check and Bounds.
func describe[T any](c Config, p resilience.Policy[T]) resilience.Policy[T] {
	return p.Describe(resilience.Layer{Kind: resilience.KindTimeout, Timeout: c.Duration})
}

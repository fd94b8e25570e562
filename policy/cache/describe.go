package cache

import "github.com/f0b5b96b/resilience"

// describe attaches the cache's description to p, its layer, for
// resilience's Check and Bounds: a layer of kind other that adds no wait.
//
// One call through the cache runs the rest of the chain at most once: a
// miss starts one load; a call that waits for another's load, or hits,
// runs none; a StaleWhileRevalidate hit starts at most one refresh, in the
// background, which the call does not wait for. A call that waits for a
// load waits no longer than the load, which started before it and is
// bounded as the rest of the chain is (and by LoadTimeout, which Bounds
// does not count, as it does not count the caller's own deadline). A
// Store's Get and Set are taken, as observers are, to take no time: a
// Store bounds its own calls.
func describe[T any](p resilience.Policy[T]) resilience.Policy[T] {
	return p.Describe(resilience.Layer{Kind: resilience.KindOther})
}

package chaos

import "github.com/f0b5b96b/resilience"

// describe attaches d to p for resilience's Check and Bounds. The chaos
// policies call the rest of the chain at most once; the time their
// functions take is not known, so their wait has no bound.
func describe[T any](d resilience.Layer, p resilience.Policy[T]) resilience.Policy[T] {
	return p.Describe(d)
}

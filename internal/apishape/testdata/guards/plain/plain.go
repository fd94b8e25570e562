// Package plain has no guard: the rules of a guard's package (its Stats'
// Refused, its policy adapters' names) do not apply to it.
package plain

// Stats counts what the package did; it refuses nothing.
type Stats struct{ Hits uint64 }

// RetryPolicy is not a guard's policy adapter.
func RetryPolicy() {}

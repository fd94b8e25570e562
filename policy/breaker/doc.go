// Package breaker is a circuit breaker: a guard, shared by every call to one
// dependency, that stops calls while the dependency fails (closed, open,
// half-open).
//
// The package is being built under issue #3; until then it holds only this
// documentation.
package breaker

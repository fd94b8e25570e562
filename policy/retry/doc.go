// Package retry runs a failed call again after a backoff: a typed policy with
// a shared retry budget.
//
// The package is being built under issue #4; until then it holds only this
// documentation.
package retry

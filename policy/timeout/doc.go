// Package timeout bounds how long one call may take: a typed policy.
//
// The package is being built under issue #4; until then it holds only this
// documentation.
package timeout

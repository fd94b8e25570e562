// Package ratelimit bounds how often a dependency is called: a token bucket
// shared by every call to it.
//
// The package is being built under issue #5; until then it holds only this
// documentation.
package ratelimit

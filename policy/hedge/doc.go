// Package hedge races a second copy of a slow call (hedged requests): a typed
// policy.
//
// The package is being built under issue #4; until then it holds only this
// documentation.
package hedge

// Package bulkhead bounds how many calls to one dependency run at once: a
// guard shared by every call to it.
//
// The package is being built under issue #5; until then it holds only this
// documentation.
package bulkhead

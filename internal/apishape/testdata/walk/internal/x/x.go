// Package x is where the checker does not look.
package x

type Stats struct{ Rejected uint64 }

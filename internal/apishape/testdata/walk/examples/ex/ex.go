// Package ex is under an examples directory: the checker skips it.
package ex

type Stats struct{ Rejected uint64 }

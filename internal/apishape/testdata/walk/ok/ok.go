// Package ok has the shape.
package ok

type Stats struct{ Refused uint64 }

package resilienceotel

import "github.com/f0b5b96b/resilience/resilienceotel/internal/export"

// series is a set of metric series by key (export.Series): a lookup of a
// key seen before takes no lock and allocates nothing.
type series[K comparable, V any] = export.Series[K, V]

// other is the value an attribute takes past its bound: the one
// OpenTelemetry's semantic conventions give error.type when no better value
// is known.
const other = export.Other

// maxErrorTypes bounds the distinct values of error.type one Metrics
// reports; later ones read as "_OTHER".
const maxErrorTypes = export.MaxErrorTypes

// bound keeps the distinct values of an attribute within a group (the
// keys of one keyed guard, say) to at most max (0: none); see
// export.Bound.
type bound[G comparable] struct {
	max  int
	vals export.Bound[G]
}

// of returns v if it is within the bound of group g, else other.
func (b *bound[G]) of(g G, v string) string { return b.vals.Of(b.max, g, v) }

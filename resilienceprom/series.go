package resilienceprom

import "github.com/f0b5b96b/resilience/resilienceprom/internal/export"

// series is a set of metric series by key (export.Series): a lookup of a
// key seen before takes no lock and allocates nothing.
type series[K comparable, V any] = export.Series[K, V]

package bulkhead

import "github.com/f0b5b96b/resilience"

// describe attaches to p, b's layer, its description for resilience's
// Check and Bounds: the longest wait for a slot is 0 with no queue,
// MaxWait with one, and has no bound with a queue and no MaxWait.
func describe[T any](b *Bulkhead, p resilience.Policy[T]) resilience.Policy[T] {
	d := resilience.Layer{Kind: resilience.KindBulkhead}
	switch {
	case b.cfg.MaxQueue <= 0:
	case b.cfg.MaxWait > 0:
		d.MaxWait = b.cfg.MaxWait
	default:
		d.MaxWait = resilience.Off
	}
	return p.Describe(d)
}

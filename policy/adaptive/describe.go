package adaptive

import "github.com/f0b5b96b/resilience"

// describe attaches to p, l's layer, its description for resilience's
// Check and Bounds: a concurrency limit, like a bulkhead, whose longest
// wait is 0 with no queue, MaxWait with one, and has no bound with a queue
// and no MaxWait.
func describe[T any](l *Limiter, p resilience.Policy[T]) resilience.Policy[T] {
	d := resilience.Layer{Kind: resilience.KindBulkhead}
	switch {
	case l.cfg.MaxQueue <= 0:
	case l.cfg.MaxWait > 0:
		d.MaxWait = l.cfg.MaxWait
	default:
		d.MaxWait = resilience.Off
	}
	return p.Describe(d)
}

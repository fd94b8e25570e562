package ratelimit

import "github.com/f0b5b96b/resilience"

// describe attaches to p, a layer of the limiter whose settings are lp, its
// description for resilience's Check and Bounds: Policy never waits;
// WaitPolicy waits up to MaxWait, or with no bound when MaxWait is 0. The
// description keeps the settings the layer was made with; a limiter given
// new settings later is not followed.
func describe[T any](lp *params, waits bool, p resilience.Policy[T]) resilience.Policy[T] {
	d := resilience.Layer{Kind: resilience.KindRateLimit}
	switch {
	case !waits:
	case lp.cfg.MaxWait > 0:
		d.MaxWait = lp.cfg.MaxWait
	default:
		d.MaxWait = resilience.Off
	}
	return p.Describe(d)
}

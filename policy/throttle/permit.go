package throttle

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
)

// Permit is a [Throttler]'s leave to send one request, from
// [Throttler.Allow]. The caller sends it and then ends the permit exactly
// once with [Permit.Done]:
//
//	p, err := th.Allow()
//	if err != nil {
//		return err // throttled: the dependency was not called
//	}
//	resp, err := call(ctx)
//	p.Done(err)
//
// Only the first Done counts; later ones are ignored, and so is Done on
// the zero Permit (the one Allow returns with an error). A Permit is a
// small value: issuing and ending one allocates nothing. It must not be
// copied (go vet reports copies): end it through the variable Allow
// returned it in. A Permit is not safe for simultaneous use; the
// throttler it came from is.
type Permit struct {
	_     noCopy
	t     *Throttler
	epoch int64 // the bucket the request was counted in
	done  bool
}

// Done reports the request's outcome. The dependency accepted it if err
// is nil, or if err is marked resilience.Permanent (the dependency
// answered, with an answer no retry can change: a 404, a 400, which is no
// sign of overload). An error that matches, through errors.Is,
// context.Canceled (the caller gave up) or resilience.ErrRefused (an inner
// guard refused: the dependency was not called) takes the request back:
// it counts as never made. Any other error (context.DeadlineExceeded
// included) is a request the dependency did not accept.
//
// A request that ends after its bucket has left the window (one that took
// longer than the window) is not counted.
func (p *Permit) Done(err error) {
	t := p.t
	if t == nil || p.done {
		return
	}
	p.done = true
	b := &t.ring[p.epoch%buckets]
	if b.epoch.Load() != p.epoch {
		return
	}
	// A request whose bucket is no longer the current one, but still in
	// the window, also counts in the window's sums at once. (If the
	// buckets turn between the two adds, the new sums count it twice: the
	// error errs toward sending, by the few requests that end as the
	// buckets turn.) While the buckets are stopped, the sums are made
	// afresh when they start again.
	cur := t.cur.Load()
	late := cur >= 0 && p.epoch != cur && p.epoch > cur-buckets
	switch {
	case err == nil, resilience.IsPermanent(err):
		b.stripe().accepts.Add(1)
		if late {
			t.closed.Load().lateAcc.Add(1)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, resilience.ErrRefused):
		b.stripe().requests.Add(-1)
		if late {
			t.closed.Load().lateReq.Add(-1)
		}
	default:
		b.failed.Add(1)
	}
}

// noCopy makes go vet's copylocks check report copies of a Permit.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

package adaptive

import (
	"context"
	"errors"

	"github.com/f0b5b96b/resilience"
)

// Permit is a [Limiter]'s admission of one call, from [Limiter.Acquire].
// The caller makes the call and then ends the permit exactly once with
// [Permit.Done]:
//
//	p, err := lim.Acquire(ctx)
//	if err != nil {
//		return err // refused (or ctx ended): the dependency was not called
//	}
//	resp, err := call(ctx)
//	p.Done(err)
//
// The call's latency runs from Acquire's return to Done, on the limiter's
// clock (when calls come fast, only a sample of them is timed: see
// [Limiter]). Only the first Done counts; later ones are ignored, and so is
// Done on the zero Permit (the one Acquire returns with an error).
//
// A Permit is a small value: issuing and ending one allocates nothing. It
// must not be copied (go vet reports copies): end it through the variable
// Acquire returned it in. A Permit is not safe for simultaneous use; the
// limiter it came from is.
type Permit struct {
	_     noCopy
	l     *Limiter
	start int64 // admission, on the limiter's clock; -1: the call is not timed
	done  bool
}

// Done ends the call: it gives the permit's slot back (to the first
// queued caller that may have it) and tells the limiter what the call
// measured. A nil error is a success, whose latency counts; an error that
// matches, through errors.Is, context.Canceled (the caller gave up) or
// resilience.ErrRefused (an inner guard refused: the dependency was not
// called) says nothing about the dependency and is not counted; any other
// error (context.DeadlineExceeded included: the dependency did not answer
// in time) counts as a failure, without its latency (a call that fails
// fast is no sign of a fast dependency). This is the rule of
// breaker.DefaultClassify.
func (p *Permit) Done(err error) {
	l := p.l
	if l == nil || p.done {
		return
	}
	p.done = true
	timed := p.start >= 0
	var now int64
	if timed {
		now = l.now()
	}
	switch {
	case err == nil:
		l.winOK.Add(1)
		if timed {
			l.winCount.Add(1)
			l.winSum.Add(max(now-p.start, 0))
		}
	case errors.Is(err, context.Canceled), errors.Is(err, resilience.ErrRefused):
	default:
		l.winDrops.Add(1)
	}
	l.release()
	if timed {
		l.maybeEnd(now)
	}
}

// noCopy makes go vet's copylocks check report copies of a Permit.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

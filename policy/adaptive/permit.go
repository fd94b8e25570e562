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
	ctx   context.Context // Acquire's
	start int64           // admission, on the limiter's clock; -1: the call is not timed
	done  bool
}

// Done ends the call: it gives the permit's slot back (to the first
// queued caller that may have it) and tells the limiter what the call
// measured. A nil error is a success, whose latency counts. A call that
// says nothing about the dependency is not counted at all (it neither
// lowers nor raises the limit, is no sample of a window, and does not
// make the window read as stalled): one whose error matches, through
// errors.Is, context.Canceled (the caller gave up) or resilience.ErrRefused
// (an inner guard refused: the dependency was not called), and one that
// failed, with any error, after the context given to [Limiter.Acquire]
// ended (the caller cancelled it or its deadline passed). Any other
// error counts as a failure, without its latency (a call that fails fast
// is no sign of a fast dependency): context.DeadlineExceeded too when
// the caller's context is still live, for it comes from a timeout inside
// the call (the dependency did not answer in time). To have slow calls
// lower the limit while callers' deadlines are short, put a timeout
// inside the limiter: resilience.Then(adaptive.Policy[T](l),
// timeout.New[T](d)).
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
	case errors.Is(err, context.Canceled), errors.Is(err, resilience.ErrRefused), p.ctx.Err() != nil:
		l.winIgnored.Add(1)
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

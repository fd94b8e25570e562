package breaker

import (
	"context"
	"strconv"
)

// Permit is the breaker's admission of one call, from [Breaker.Allow]. The
// caller makes the call and then reports its outcome exactly once with
// [Permit.Done] or [Permit.Report]:
//
//	p, err := b.Allow()
//	if err != nil {
//		return err // refused: the dependency was not called
//	}
//	resp, err := call()
//	p.Done(err)
//
// Only the first report counts; later ones are ignored. A report is also
// ignored when the breaker has changed generation since the permit was
// issued (a transition, ForceOpen, ForceClosed or Reset happened): a
// verdict on an older state says nothing about the current one. A half-open
// trial that is not reported within Config.TrialTimeout of its admission
// (by default, the longest cooldown) expires and counts as failed: the
// breaker opens again, so an abandoned permit wedges nothing for good.
//
// A Permit is a small value: issuing and reporting one allocates nothing.
// It must not be copied (go vet reports copies): report through the
// variable Allow returned it in. The Permit returned with a refusal, like
// the zero Permit, reports nothing. A Permit is not safe for simultaneous use; the breaker it
// came from is.
type Permit struct {
	_     noCopy
	b     *Breaker
	word  uint64 // the breaker's state word when the call was admitted
	start int64  // when the call was admitted, if it is timed
	trial uint32 // half-open trial id; 0 while closed
	done  bool
}

// admission returns what p holds of its call.
func (p *Permit) admission() admission {
	return admission{word: p.word, start: p.start, trial: p.trial}
}

// Done reports the outcome of the call from its error: a nil error is a
// success, any other is classified by Config.Classify (by default
// [DefaultClassify]: context.Canceled and refusals of other guards are
// ignored, other errors are failures). When SlowCall is set, a call that
// took longer is also slow.
//
// Done panics if Config.Classify returns an invalid Outcome (not Success,
// Failure or Ignored), with a message naming it; the call is then counted
// neither way and its permit is released (as it is when the classifier
// itself panics), so a half-open trial slot is not lost.
func (p *Permit) Done(err error) {
	if err != nil {
		p.fail(err)
	} else if p.b != nil && !p.done {
		p.done = true
		p.b.complete(p.admission(), true, Success, nil)
	}
}

func (p *Permit) fail(err error) {
	if p.b != nil && !p.done {
		p.done = true
		p.b.completeErr(context.Background(), p.admission(), err)
	}
}

// Report reports the outcome of the call as o, without classifying an
// error. It panics if o is not [Success], [Failure] or [Ignored].
func (p *Permit) Report(o Outcome) {
	if o > Ignored {
		panic("breaker: Report outcome must be Success, Failure or Ignored, got " + strconv.Itoa(int(o)))
	}
	if p.b != nil && !p.done {
		p.done = true
		p.b.complete(p.admission(), true, o, nil)
	}
}

// noCopy makes go vet's copylocks check report copies of a Permit.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

package breaker

// trial is an outstanding half-open trial: its id, and when it expires.
type trial struct {
	id      uint32
	expires int64
}

// trialDeadline returns when the first outstanding trial expires, and
// whether there is one.
func (b *Breaker) trialDeadline() (int64, bool) {
	if len(b.trials) == 0 {
		return 0, false
	}
	d := b.trials[0].expires
	for _, t := range b.trials[1:] {
		d = min(d, t.expires)
	}
	return d, true
}

// admitTrialLocked admits a half-open trial at time now and returns its id.
// The trial expires the effective TrialTimeout after now.
func (b *Breaker) admitTrialLocked(now int64) uint32 {
	b.nextTrial++
	b.trials = append(b.trials, trial{b.nextTrial, satAdd(now, b.cfg.trialTimeout)})
	return b.nextTrial
}

// removeTrialLocked removes the outstanding trial id and reports whether
// it was outstanding (it was not if it expired or was already reported).
func (b *Breaker) removeTrialLocked(id uint32) bool {
	for i, t := range b.trials {
		if t.id == id {
			b.trials[i] = b.trials[len(b.trials)-1]
			b.trials = b.trials[:len(b.trials)-1]
			return true
		}
	}
	return false
}

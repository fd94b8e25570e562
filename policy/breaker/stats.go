package breaker

import (
	"time"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Stats is a snapshot of a breaker's live state, from [Breaker.Stats]:
// its state and generation and the counts of that state, all of one
// moment, and the refusals of its whole life.
type Stats struct {
	// Key is the key of a [Keyed]'s breaker, as a string (see
	// Transition.Key); "" for a breaker from New.
	Key    string
	State  State // as [Breaker.State] reads it
	Forced bool  // held open or closed by ForceOpen or ForceClosed
	// Generation is 1 for a new breaker, plus one for each transition and
	// each ForceOpen, ForceClosed or Reset (see the package doc).
	Generation uint64
	// Counts are the counts of the current state (generation), as
	// [Breaker.Counts] returns them.
	Counts Counts
	// Refused is the number of calls the breaker has refused since it was
	// made (Counts.Refused starts from zero at each generation). It only
	// grows.
	Refused uint64
	// OpenFor is how long the breaker has been open: the time since it
	// last entered the open state (by a trip, a failed trial, a trial
	// that timed out, or ForceOpen); 0 unless State is Open.
	OpenFor time.Duration
	// CooldownLeft is the time until the open breaker turns half-open;
	// 0 unless State is Open, and 0 for a breaker held open by ForceOpen
	// (it stays open until ForceClosed or Reset).
	CooldownLeft time.Duration
}

// Stats returns a snapshot of the breaker now. It is consistent: State,
// Forced, Generation and Counts are read together under the breaker's
// lock, the one that every transition and every failure takes, so they
// belong to one generation and a transition never falls between them.
// Successes and refusals, which are counted without that lock, are in it
// or not whole; Refused is read after Counts, so it is never less than
// the Counts.Refused it comes with. Like [Breaker.State] and
// [Breaker.Counts], Stats makes a transition that time has made due
// happen first (and delivers its callback and event).
//
// Stats allocates nothing; its cost is that of Counts: a lock and a read
// of the breaker's counter shards (one, or 17 to 129 for a breaker that
// has grown them under contention), cheap enough to poll every second for
// thousands of breakers.
func (b *Breaker) Stats() Stats {
	b.mu.Lock()
	now := b.now() // under the lock: transitions' times never go backwards
	b.advanceLocked(now)
	w := b.word.Load()
	s := Stats{
		Key:        b.key,
		State:      wordState(w),
		Forced:     wordForced(w),
		Generation: wordGen(w),
		Counts:     b.countsLocked(now),
		Refused:    b.refusalsLocked(), // after Counts: never below its Refused
	}
	if s.State == Open {
		s.OpenFor = time.Duration(max(now-b.since, 0))
		if !s.Forced {
			s.CooldownLeft = time.Duration(max(b.deadline.Load()-now, 0))
		}
	}
	b.unlock()
	return s
}

// Snapshot returns [Breaker.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// Kind, the breaker's Name, its State ("closed", "open",
// "half-open"), Refused, and these Values (the counts are those of the
// current state, as [Breaker.Counts] has them):
//
//	open_for               gauge  "s"       Stats.OpenFor: time since the breaker opened; 0 unless open
//	cooldown_left          gauge  "s"       Stats.CooldownLeft: time until it turns half-open; 0 unless open, and while forced
//	window_calls           gauge  "{call}"  calls counted (see below)
//	window_failures        gauge  "{call}"  failures counted
//	failure_ratio          gauge  "1"       window_failures / window_calls, in [0, 1]
//	window_refused         gauge  "{call}"  calls refused since the current state began
//	window_successes       gauge  "{call}"  successes counted
//	window_slow            gauge  "{call}"  slow calls counted
//	consecutive_failures   gauge  "{call}"  failures in a row, in the current state
//	consecutive_successes  gauge  "{call}"  successes in a row, in the current state
//	generation             gauge  "{generation}"
//	forced                 gauge  "1"       1 while held open or closed by hand, else 0
//
// The counted calls, failures, successes and slow calls are those the
// breaker's rules see: over the sliding window while the breaker is closed
// and has one (WindowCalls, WindowDuration, or a FailureRatio or
// SlowCallRatio rule, which keeps the last 100 calls by default);
// otherwise, and in every other state, since the current state began (so a
// closed breaker with only a Threshold rule counts the calls since it last
// closed, and a half-open one counts its trials).
// window_refused is never over a window. The help of each value says so.
//
// It allocates the Values slice.
func (b *Breaker) Snapshot() telemetry.Snapshot {
	return b.Stats().snapshot(b.cfg.name)
}

func (s Stats) snapshot(name string) telemetry.Snapshot {
	c := s.Counts
	forced := 0.0
	if s.Forced {
		forced = 1
	}
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    name,
		State:   s.State.String(),
		Refused: s.Refused,
		Values: []telemetry.Value{
			{Name: "open_for", Unit: "s", Help: "Time since the breaker last opened; 0 unless it is open.", Value: s.OpenFor.Seconds()},
			{Name: "cooldown_left", Unit: "s", Help: "Time until the open breaker turns half-open; 0 unless it is open, and while held open by ForceOpen.", Value: s.CooldownLeft.Seconds()},
			{Name: "window_calls", Unit: "{call}", Help: "Calls counted: over the sliding window while closed, if the breaker has one (WindowCalls, WindowDuration, or a ratio rule: the last 100 calls); else since the current state began (half-open: the trials).", Value: float64(c.Calls)},
			{Name: "window_failures", Unit: "{call}", Help: "Failures counted: over the sliding window while closed, if the breaker has one; else since the current state began.", Value: float64(c.Failures)},
			{Name: "failure_ratio", Unit: "1", Help: "window_failures / window_calls, in [0, 1]; 0 without calls.", Value: c.FailureRatio},
			{Name: "window_refused", Unit: "{call}", Help: "Calls refused since the current state began (not a window: refusals happen while open or half-open).", Value: float64(c.Refused)},
			{Name: "window_successes", Unit: "{call}", Help: "Successes counted: over the sliding window while closed, if the breaker has one; else since the current state began.", Value: float64(c.Successes)},
			{Name: "window_slow", Unit: "{call}", Help: "Slow calls counted: over the sliding window while closed, if the breaker has one; else since the current state began.", Value: float64(c.Slow)},
			{Name: "consecutive_failures", Unit: "{call}", Help: "Failures in a row, in the current state.", Value: float64(c.ConsecutiveFailures)},
			{Name: "consecutive_successes", Unit: "{call}", Help: "Successes in a row, in the current state.", Value: float64(c.ConsecutiveSuccesses)},
			{Name: "generation", Unit: "{generation}", Help: "The breaker's generation: 1 when made, one more at each transition, ForceOpen, ForceClosed or Reset.", Value: float64(s.Generation)},
			{Name: "forced", Unit: "1", Help: "1 while the breaker is held open or closed by hand (ForceOpen, ForceClosed), else 0.", Value: forced},
		},
	}
}

// Name returns the Keyed's name (its Config.Name), shared by its
// breakers.
func (k *Keyed[K]) Name() string { return k.cfg.name }

// Snapshot returns the Keyed in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// Kind, the Keyed's Name, no State (each key has its own),
// Refused, the refusals of the breakers of the keys tracked now (a
// forgotten key's refusals leave the sum, so it may fall), Keys (the keys
// tracked, those whose breaker is open, and the [telemetry.TopKeys] keys
// with the most refusals), and these Values:
//
//	keys                gauge    "{key}"  keys tracked now
//	max_keys            gauge    "{key}"  the bound on them (Config.MaxKeys)
//	open_keys           gauge    "{key}"  keys whose breaker is open now
//	half_open_keys      gauge    "{key}"  keys whose breaker is half-open now
//	evicted             counter  "{key}"  keys forgotten to make room
//	evicted_not_closed  counter  "{key}"  of those, breakers not closed
//
// It reads every tracked breaker's Stats (as [Keyed.All] lists them, so
// outside the Keyed's lock), so it costs a lock and a read of the shards
// per key, and allocates the list of breakers and the Values.
func (k *Keyed[K]) Snapshot() telemetry.Snapshot {
	ks := k.Stats()
	sum := telemetry.KeySummary{Keys: ks.Keys, MaxKeys: ks.MaxKeys}
	var refused uint64
	halfOpen := 0
	for _, b := range k.All() {
		s := b.Stats()
		refused += s.Refused
		switch s.State {
		case Open:
			sum.Open++
		case HalfOpen:
			halfOpen++
		}
		sum.Top = telemetry.AddTop(sum.Top, telemetry.KeyStat{Key: s.Key, State: s.State.String(), Refused: s.Refused})
	}
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    k.cfg.name,
		Refused: refused,
		Keys:    &sum,
		Values: []telemetry.Value{
			{Name: "keys", Unit: "{key}", Help: "Keys tracked now, each with its breaker.", Value: float64(ks.Keys)},
			{Name: "max_keys", Unit: "{key}", Help: "The most keys tracked (MaxKeys).", Value: float64(ks.MaxKeys)},
			{Name: "open_keys", Unit: "{key}", Help: "Keys whose breaker is open now.", Value: float64(sum.Open)},
			{Name: "half_open_keys", Unit: "{key}", Help: "Keys whose breaker is half-open now.", Value: float64(halfOpen)},
			{Name: "evicted", Unit: "{key}", Type: telemetry.CounterValue, Help: "Keys forgotten to make room for new ones.", Value: float64(ks.Evicted)},
			{Name: "evicted_not_closed", Unit: "{key}", Type: telemetry.CounterValue, Help: "Keys forgotten while their breaker was open, half-open or forced.", Value: float64(ks.EvictedNotClosed)},
		},
	}
}

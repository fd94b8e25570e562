package policytest

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// This file checks that a breaker's Stats agree with the events it
// emitted, over random configurations (drawConfig) and schedules: the
// refusals it counts are the refusal events; each generation is a
// transition event or a manual control that kept the state; its state is
// the last transition's; the counts of the current generation are the
// events since it began.

// evMachine runs a breaker with an observer and tallies its events.
type evMachine struct {
	cfg     bConfig
	clk     *clock.Fake
	b       *breaker.Breaker
	permits []*breaker.Permit

	events []telemetry.Event // not yet tallied
	left   []breaker.Counts  // the counts of each state left, from OnStateChange, not yet tallied

	refused      uint64 // refusal events, all generations
	transitions  uint64
	kept         uint64 // manual controls that kept the state: a generation each, no event
	state        string // the last transition's To
	genRefused   uint64 // refusal events of the current generation
	genFailures  uint64 // failure events of the current generation
	windowed     bool   // closed counts are over a window: failures not compared
	lastSnapshot breaker.Stats
}

func newEvMachine(t *rapid.T) *evMachine {
	cfg := drawConfig(t)
	m := &evMachine{cfg: cfg, clk: clock.NewFake(), state: telemetry.StateClosed}
	m.windowed = cfg.windowCalls > 0 || cfg.windowBuckets > 0
	opts := append(cfg.opts, breaker.WithClock(m.clk),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) { m.events = append(m.events, e) })),
		breaker.WithOnStateChange(func(tr breaker.Transition) { m.left = append(m.left, tr.Counts) }))
	m.b = breaker.New(opts...)
	return m
}

// tally folds the events emitted since the last tally into the counts.
func (m *evMachine) tally(t *rapid.T) {
	for _, e := range m.events {
		if e.Name != m.b.Name() || e.Kind() != breaker.Kind {
			t.Fatalf("event %+v: want kind breaker and name %q", e, m.b.Name())
		}
		switch e.Type {
		case breaker.EventOpened, breaker.EventHalfOpened, breaker.EventClosed:
			if e.From != m.state || e.To == e.From {
				t.Fatalf("transition %+v after a transition to %q", e, m.state)
			}
			// OnStateChange, called just before, has the counts of the
			// state left: they must be the events of its generation.
			if len(m.left) == 0 {
				t.Fatalf("transition event %+v without its OnStateChange", e)
			}
			c := m.left[0]
			m.left = m.left[1:]
			if c.Refused != m.genRefused || (!m.windowed || e.From != telemetry.StateClosed) && c.Failures != m.genFailures {
				t.Fatalf("transition %+v left counts %+v; events of its generation: %d refusals, %d failures", e, c, m.genRefused, m.genFailures)
			}
			m.transitions++
			m.state = e.To
			m.genRefused, m.genFailures = 0, 0
		case breaker.EventRefused:
			var re *resilience.RefusedError
			if !errors.As(e.Err, &re) || re.RetryAfter() != e.Wait {
				t.Fatalf("refusal event %+v: want a *RefusedError whose RetryAfter is Wait", e)
			}
			m.refused++
			m.genRefused++
		case breaker.EventFailure:
			m.genFailures++
		case breaker.EventIgnored:
		default:
			t.Fatalf("unexpected event %+v", e)
		}
	}
	m.events = m.events[:0]
}

// allow asks for a few permits, as callers arriving together do.
func (m *evMachine) allow(t *rapid.T) {
	for range rapid.IntRange(1, 4).Draw(t, "calls") {
		p, err := m.b.Allow()
		if err == nil && len(m.permits) < 6 {
			m.permits = append(m.permits, &p)
		} else if err == nil {
			p.Report(breaker.Ignored)
		}
		m.tally(t)
	}
}

func (m *evMachine) report(t *rapid.T) {
	if len(m.permits) == 0 {
		t.Skip("no permit outstanding")
	}
	i := rapid.IntRange(0, len(m.permits)-1).Draw(t, "permit")
	p := m.permits[i]
	m.permits = append(m.permits[:i], m.permits[i+1:]...)
	switch rapid.IntRange(0, 3).Draw(t, "outcome") {
	case 0:
		p.Done(nil)
	case 1:
		p.Done(errors.New("boom"))
	case 2:
		p.Report(breaker.Failure)
	default:
		p.Report(breaker.Ignored)
	}
	m.tally(t)
}

// manual runs a manual control to state to: it starts a generation, and
// emits a transition unless the breaker is in that state already.
func (m *evMachine) manual(t *rapid.T, to breaker.State, f func()) {
	before := m.b.State() // makes due transitions happen (and tallied) first
	m.tally(t)
	f()
	if before == to {
		m.kept++
	}
	m.tally(t)
	m.genRefused, m.genFailures = 0, 0
}

func (m *evMachine) check(t *rapid.T) {
	s := m.b.Stats() // may make a due transition happen: tally after
	m.tally(t)
	if s.Refused != m.refused {
		t.Fatalf("Stats().Refused = %d, refusal events = %d", s.Refused, m.refused)
	}
	if want := 1 + m.transitions + m.kept; s.Generation != want {
		t.Fatalf("Stats().Generation = %d, want 1 + %d transitions + %d kept = %d", s.Generation, m.transitions, m.kept, want)
	}
	if s.State.String() != m.state {
		t.Fatalf("Stats().State = %v, last transition to %q", s.State, m.state)
	}
	if s.Counts.Refused != m.genRefused {
		t.Fatalf("Stats().Counts.Refused = %d, refusal events in this generation = %d", s.Counts.Refused, m.genRefused)
	}
	if (!m.windowed || s.State != breaker.Closed) && s.Counts.Failures != m.genFailures {
		t.Fatalf("Stats().Counts.Failures = %d, failure events in this generation = %d", s.Counts.Failures, m.genFailures)
	}
	if s.Generation < m.lastSnapshot.Generation || s.Refused < m.lastSnapshot.Refused {
		t.Fatalf("Stats went back: %+v after %+v", s, m.lastSnapshot)
	}
	m.lastSnapshot = s
}

func TestBreakerStatsAgreeWithEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newEvMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"Allow":  m.allow,
			"Report": m.report,
			"Record": func(t *rapid.T) {
				m.b.Record(rapid.Bool().Draw(t, "failure"))
				m.tally(t)
			},
			"Failures": func(t *rapid.T) { // enough in a row to trip most configurations
				for range rapid.IntRange(1, 6).Draw(t, "failures") {
					m.b.Record(true)
					m.tally(t)
				}
			},
			"Advance": func(t *rapid.T) {
				m.clk.Advance(rapid.SampledFrom([]time.Duration{
					100 * time.Millisecond, time.Second, m.cfg.longest, m.cfg.trialTTL,
				}).Draw(t, "advance"))
			},
			"ForceOpen":   func(t *rapid.T) { m.manual(t, breaker.Open, m.b.ForceOpen) },
			"ForceClosed": func(t *rapid.T) { m.manual(t, breaker.Closed, m.b.ForceClosed) },
			"Reset":       func(t *rapid.T) { m.manual(t, breaker.Closed, m.b.Reset) },
			"":            m.check,
		})
	})
}

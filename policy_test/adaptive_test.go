package policytest

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// wild is an Algorithm that returns whatever rapid draws: any limit,
// NaN, ±Inf, negatives, huge values. The limiter must keep its limit in
// [Min, Max] all the same.
type wild struct{ t *rapid.T }

func (w wild) Next(limit float64, _ adaptive.Window) float64 {
	switch rapid.IntRange(0, 5).Draw(w.t, "wild kind") {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return -rapid.Float64Range(0, 1e9).Draw(w.t, "wild negative")
	case 4:
		return rapid.Float64Range(0, 1e12).Draw(w.t, "wild huge")
	}
	return limit + rapid.Float64Range(-20, 20).Draw(w.t, "wild step")
}

// alMachine drives an adaptive.Limiter without a queue, on a fake clock,
// one step at a time, beside a model of its admissions: the calls it
// holds, its refusals, and the rule that a call of priority p is admitted
// iff fewer calls are in flight than p's ceiling of the current limit.
type alMachine struct {
	lim      *adaptive.Limiter
	fake     *clock.Fake
	min, max int
	reserve  float64
	held     []*adaptive.Permit
	refused  uint64
	// coverage
	admitted, rises, falls, overLimit int
	last                              int // the limit at the last check
}

func newAlMachine(t *rapid.T) *alMachine {
	m := &alMachine{fake: clock.NewFake()}
	m.min = rapid.IntRange(1, 5).Draw(t, "min")
	m.max = rapid.IntRange(m.min, 40).Draw(t, "max")
	initial := rapid.IntRange(m.min, m.max).Draw(t, "initial")
	m.reserve = rapid.SampledFrom([]float64{0, 0.1, 0.25, 0.5, 0.9}).Draw(t, "reserve")
	var alg adaptive.Algorithm
	switch rapid.IntRange(0, 3).Draw(t, "algorithm") {
	case 0:
		alg = adaptive.Gradient2{}
	case 1:
		alg = adaptive.Vegas{}
	case 2:
		alg = adaptive.AIMD{}
	default:
		alg = wild{t}
	}
	opts := []adaptive.Option{
		adaptive.WithClock(m.fake), adaptive.WithAlgorithm(alg), adaptive.WithMinLimit(m.min), adaptive.WithMaxLimit(m.max), adaptive.WithInitial(initial),
		adaptive.WithReserve(m.reserve), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(rapid.IntRange(1, 5).Draw(t, "min samples")),
	}
	if rapid.Bool().Draw(t, "max latency") {
		opts = append(opts, adaptive.WithMaxLatency(200*time.Millisecond))
	}
	m.lim = adaptive.New(opts...)
	m.last = initial
	return m
}

// ceiling is the model's admission ceiling of priority p under limit.
func (m *alMachine) ceiling(limit int, p adaptive.Priority) int {
	share := 1.0
	switch p {
	case adaptive.Normal:
		share = 1 - m.reserve
	case adaptive.Low:
		share = (1 - m.reserve) * (1 - m.reserve)
	}
	if m.reserve == 0 {
		share = 1
	}
	return int(math.Ceil(float64(limit) * share))
}

func (m *alMachine) acquire(t *rapid.T) {
	p := rapid.SampledFrom([]adaptive.Priority{adaptive.Low, adaptive.Normal, adaptive.Critical}).Draw(t, "priority")
	before := m.lim.Stats()
	want := before.InFlight < m.ceiling(before.Limit, p)
	permit := new(adaptive.Permit)
	var err error
	*permit, err = m.lim.Acquire(adaptive.ContextWithPriority(context.Background(), p))
	after := m.lim.Stats()
	switch {
	case err == nil && !want:
		t.Fatalf("admitted a %v call with %d in flight, limit %d (its ceiling %d)", p, before.InFlight, before.Limit, m.ceiling(before.Limit, p))
	case err != nil && want:
		t.Fatalf("refused a %v call with %d in flight, limit %d (its ceiling %d): %v", p, before.InFlight, before.Limit, m.ceiling(before.Limit, p), err)
	case err != nil && !errors.Is(err, adaptive.ErrFull):
		t.Fatalf("refusal %v does not match ErrFull", err)
	case err != nil:
		m.refused++
	default:
		m.held = append(m.held, permit)
		m.admitted++
		if after.InFlight > after.Limit {
			t.Fatalf("after an admission: %d in flight, over the limit %d", after.InFlight, after.Limit)
		}
	}
}

// fill admits critical calls until one is refused.
func (m *alMachine) fill(t *rapid.T) {
	for range m.max + 1 {
		before := m.lim.Stats()
		permit := new(adaptive.Permit)
		var err error
		*permit, err = m.lim.Acquire(adaptive.ContextWithPriority(context.Background(), adaptive.Critical))
		if err != nil {
			if before.InFlight < before.Limit {
				t.Fatalf("refused a critical call with %d in flight, limit %d: %v", before.InFlight, before.Limit, err)
			}
			m.refused++
			return
		}
		m.held = append(m.held, permit)
		m.admitted++
	}
	t.Fatalf("admitted %d critical calls, more than Max %d", m.max+1, m.max)
}

func (m *alMachine) done(t *rapid.T) {
	if len(m.held) == 0 {
		t.Skip("no call in flight")
	}
	i := rapid.IntRange(0, len(m.held)-1).Draw(t, "call")
	var err error
	switch rapid.IntRange(0, 3).Draw(t, "outcome") {
	case 1:
		err = errors.New("503")
	case 2:
		err = context.Canceled
	case 3:
		err = resilience.Refuse(adaptive.ErrFull, "inner", -1)
	}
	m.held[i].Done(err)
	m.held[i].Done(err) // a second Done is ignored
	m.held = append(m.held[:i], m.held[i+1:]...)
}

func (m *alMachine) advance(t *rapid.T) {
	m.fake.Advance(time.Duration(rapid.IntRange(0, 3000).Draw(t, "advance ms")) * time.Millisecond)
}

func (m *alMachine) check(t *rapid.T) {
	s := m.lim.Stats()
	if s.Limit < m.min || s.Limit > m.max {
		t.Fatalf("limit %d outside [%d, %d]", s.Limit, m.min, m.max)
	}
	if s.InFlight != len(m.held) || s.Queued != 0 || s.Refused != m.refused {
		t.Fatalf("Stats %+v, want %d in flight, none queued, %d rejected", s, len(m.held), m.refused)
	}
	switch {
	case s.Limit > m.last:
		m.rises++
	case s.Limit < m.last:
		m.falls++
	}
	if s.InFlight > s.Limit {
		m.overLimit++ // a lowered limit under calls in flight: no admission until they end
	}
	m.last = s.Limit
}

// The limiter admits a call iff fewer calls are in flight than the
// call's priority allows under the current limit, so in flight never
// exceeds the limit at an admission; the limit stays in [Min, Max]
// whatever the algorithm returns; the counts agree with the model.
func TestAdaptiveLimiterMatchesModel(t *testing.T) {
	var total alMachine // coverage, summed over all checks
	rapid.Check(t, func(t *rapid.T) {
		m := newAlMachine(t)
		defer func() {
			total.admitted += m.admitted
			total.refused += m.refused
			total.rises += m.rises
			total.falls += m.falls
			total.overLimit += m.overLimit
		}()
		t.Repeat(map[string]func(*rapid.T){
			"Acquire": m.acquire,
			"Fill":    m.fill,
			"Done":    m.done,
			"Advance": m.advance,
			"AdvanceThenDone": func(t *rapid.T) {
				m.advance(t)
				m.done(t)
			},
			"": m.check,
		})
	})
	t.Logf("coverage: %d admitted, %d refused, the limit rose %d times and fell %d times, %d steps with more in flight than a lowered limit",
		total.admitted, total.refused, total.rises, total.falls, total.overLimit)
	if !t.Failed() && (total.admitted == 0 || total.refused == 0 || total.rises == 0 || total.falls == 0 || total.overLimit == 0) {
		t.Error("the schedules never reached some of the cases")
	}
}

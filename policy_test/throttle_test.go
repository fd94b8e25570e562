package policytest

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// thSlot is the model of one time bucket of a throttler's window.
type thSlot struct {
	epoch, requests, settled, accepts int64
}

// thPermit is a request the model let through.
type thPermit struct {
	p     *throttle.Permit
	epoch int64
}

// thMachine drives a throttle.Throttler on a fake clock beside an exact
// model of it: 16 buckets of 1s, turned at each second while requests
// come (after a bucket without requests the buckets stop until the next
// request), the probability max(0, (requests − K × accepts) / (requests
// + 1)) over the earlier buckets' requests and the current bucket's
// ended ones, and each request's outcome counted in its own bucket, at
// once.
type thMachine struct {
	th       *throttle.Throttler
	fake     *clock.Fake
	start    time.Time
	k        float64
	u        float64 // what Random returns next
	slots    [16]thSlot
	cur      int64 // -1: idle
	permits  []thPermit
	rejected uint64
	// coverage
	throttled, sent, turns, idles, positive int
}

const thWidth = time.Second

func newThMachine(t *rapid.T) *thMachine {
	m := &thMachine{fake: clock.NewFake(), cur: -1}
	m.k = rapid.SampledFrom([]float64{1, 1.5, 2, 3}).Draw(t, "K")
	m.start = m.fake.Now()
	m.th = throttle.New(throttle.WithClock(m.fake), throttle.WithK(m.k), throttle.WithWindow(16*thWidth),
		throttle.WithRandom(func() float64 { return m.u }))
	return m
}

func (m *thMachine) epochNow() int64 { return int64(m.fake.Now().Sub(m.start) / thWidth) }

func (m *thMachine) turn(e int64) {
	s := &m.slots[e%16]
	if s.epoch != e {
		*s = thSlot{epoch: e}
	}
	m.cur = e
	m.turns++
}

func (m *thMachine) formula(r, a int64) float64 {
	if excess := float64(r) - m.k*float64(a); excess > 0 {
		return excess / float64(r+1)
	}
	return 0
}

// probability is the model's probability of a refusal now, and its
// window's requests and accepts as Stats reports them.
func (m *thMachine) probability() (p float64, requests, accepts int64) {
	if m.cur < 0 {
		now := m.epochNow()
		for _, s := range m.slots {
			if s.epoch > now-16 {
				requests += s.requests
				accepts += s.accepts
			}
		}
		return m.formula(requests, accepts), requests, accepts
	}
	var closedReq, closedAcc int64
	for _, s := range m.slots {
		if s.epoch > m.cur-16 && s.epoch < m.cur {
			closedReq += s.requests
			closedAcc += s.accepts
		}
	}
	b := m.slots[m.cur%16]
	return m.formula(closedReq+b.settled, closedAcc+b.accepts), closedReq + b.requests, closedAcc + b.accepts
}

func (m *thMachine) allow(t *rapid.T) {
	m.u = rapid.Float64Range(0, 1).Draw(t, "random")
	if m.u == 1 {
		m.u = 0.5
	}
	if m.cur < 0 {
		m.turn(m.epochNow())
	}
	p, _, _ := m.probability()
	permit := new(throttle.Permit)
	var err error
	*permit, err = m.th.Allow()
	want := p > 0 && m.u < p
	switch {
	case want && err == nil:
		t.Fatalf("probability %v, random %v: sent, want refused", p, m.u)
	case !want && err != nil:
		t.Fatalf("probability %v, random %v: refused (%v), want sent", p, m.u, err)
	case err != nil && !errors.Is(err, throttle.ErrThrottled):
		t.Fatalf("refusal %v does not match ErrThrottled", err)
	case err != nil:
		m.rejected++
		m.throttled++
	default:
		m.slots[m.cur%16].requests++
		m.permits = append(m.permits, thPermit{p: permit, epoch: m.cur})
		m.sent++
	}
}

func (m *thMachine) done(t *rapid.T) {
	if len(m.permits) == 0 {
		t.Skip("no request in flight")
	}
	i := rapid.IntRange(0, len(m.permits)-1).Draw(t, "request")
	pm := m.permits[i]
	m.permits = append(m.permits[:i], m.permits[i+1:]...)
	var err error
	kind := rapid.IntRange(0, 4).Draw(t, "outcome")
	switch kind {
	case 1:
		err = errors.New("503")
	case 2:
		err = context.Canceled
	case 3:
		err = resilience.Permanent(errors.New("404"))
	case 4:
		err = context.DeadlineExceeded
	}
	pm.p.Done(err)
	pm.p.Done(nil) // a second Done is ignored
	s := &m.slots[pm.epoch%16]
	if s.epoch != pm.epoch {
		return // its bucket left the window
	}
	switch kind {
	case 0, 3:
		s.accepts++
		s.settled++
	case 2:
		s.requests--
	default:
		s.settled++
	}
}

func (m *thMachine) advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(0, 3000).Draw(t, "advance ms")) * time.Millisecond
	end := m.fake.Now().Add(d)
	// The model's timer: a tick at each second boundary up to end, while
	// the buckets turn.
	for m.cur >= 0 {
		next := m.start.Add(time.Duration(m.cur+1) * thWidth)
		if next.After(end) {
			break
		}
		if m.slots[m.cur%16].requests == 0 {
			m.cur = -1
			m.idles++
			break
		}
		m.turn(m.cur + 1)
	}
	m.fake.Advance(d)
}

func (m *thMachine) check(t *rapid.T) {
	p, requests, accepts := m.probability()
	s := m.th.Stats()
	if s.Probability < 0 || s.Probability >= 1 {
		t.Fatalf("probability %v outside [0, 1)", s.Probability)
	}
	if s.Probability != p || s.Requests != requests || s.Accepts != accepts || s.Refused != m.rejected {
		t.Fatalf("Stats %+v, model: probability %v, %d requests, %d accepts, %d rejected", s, p, requests, accepts, m.rejected)
	}
	if s.Probability > 0 {
		m.positive++
	}
	// 0 when all calls succeed: no request of the window failed, and none
	// is in flight from a bucket before the current one.
	allGood := true
	now := m.epochNow()
	for _, s := range m.slots {
		if s.epoch > now-16 && s.settled != s.accepts {
			allGood = false
		}
	}
	for _, pm := range m.permits {
		if pm.epoch > now-16 && (m.cur < 0 || pm.epoch < m.cur) {
			allGood = false
		}
	}
	if allGood && s.Probability != 0 {
		t.Fatalf("no request of the window failed or hangs, yet the probability is %v", s.Probability)
	}
}

// The throttler's probability is the SRE formula over its window, in
// [0, 1), and 0 when all calls succeed; it refuses a request iff its
// random draw is below it; a refusal counts neither as a request nor as an
// accept; the counts agree with an exact model of its buckets.
func TestThrottlerMatchesModel(t *testing.T) {
	var total thMachine
	rapid.Check(t, func(t *rapid.T) {
		m := newThMachine(t)
		defer func() {
			total.throttled += m.throttled
			total.sent += m.sent
			total.turns += m.turns
			total.idles += m.idles
			total.positive += m.positive
		}()
		t.Repeat(map[string]func(*rapid.T){
			"Allow":   m.allow,
			"Done":    m.done,
			"Advance": m.advance,
			"AllowThenDone": func(t *rapid.T) {
				m.allow(t)
				m.done(t)
			},
			"": m.check,
		})
	})
	t.Logf("coverage: %d sent, %d throttled, %d turns of the buckets, %d pauses, %d steps with a probability above 0",
		total.sent, total.throttled, total.turns, total.idles, total.positive)
	if !t.Failed() && (total.throttled == 0 || total.idles == 0 || total.positive == 0) {
		t.Error("the schedules never reached some of the cases")
	}
}

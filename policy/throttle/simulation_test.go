package throttle_test

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

// pending is a request in flight at the dependency.
type pending struct {
	at     time.Duration
	permit *throttle.Permit
	err    error
}

type pendings []*pending

func (h pendings) Len() int           { return len(h) }
func (h pendings) Less(i, j int) bool { return h[i].at < h[j].at }
func (h pendings) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pendings) Push(x any)        { *h = append(*h, x.(*pending)) }
func (h *pendings) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// simulate sends rate requests a second through th for duration, on fake,
// in virtual time: each request that is sent answers after latency with
// fails(at) as its error. It returns, per second, the requests made and
// those sent.
func simulate(th *throttle.Throttler, fake *clock.Fake, rate float64, latency, duration time.Duration, fails func(at time.Duration) error) (made, sent []int) {
	origin := fake.Now()
	step := time.Duration(float64(time.Second) / rate)
	secs := int(duration / time.Second)
	made, sent = make([]int, secs), make([]int, secs)
	var h pendings
	for at := time.Duration(0); at < duration; at += step {
		for h.Len() > 0 && h[0].at <= at {
			p := heap.Pop(&h).(*pending)
			fake.Set(origin.Add(p.at))
			p.permit.Done(p.err)
		}
		fake.Set(origin.Add(at))
		s := int(at / time.Second)
		made[s]++
		p := new(throttle.Permit)
		var err error
		if *p, err = th.Allow(); err == nil {
			sent[s]++
			heap.Push(&h, &pending{at: at + latency, permit: p, err: fails(at)})
		}
	}
	return made, sent
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}

// A dependency that fails every request, called 1000 times a second for
// ten minutes: the throttler sends it at most requests/K of them. (With no
// accepts, the probability is n/(n+1) after n requests sent in the
// window, so it sends about √(2 × requests) per window: far fewer.)
func TestFailingDependencyGetsAtMostRequestsOverK(t *testing.T) {
	for _, k := range []float64{2, 1.5, 3} {
		fake := clock.NewFake()
		rng := rand.New(rand.NewPCG(1, uint64(k*10)))
		th := throttle.New(throttle.WithClock(fake), throttle.WithK(k), throttle.WithRandom(rng.Float64))
		down := errors.New("503")
		made, sent := simulate(th, fake, 1000, 20*time.Millisecond, 10*time.Minute, func(time.Duration) error { return down })
		m, s := sum(made), sum(sent)
		late := sum(sent[120:])
		fig := fmt.Sprintf("K %v: %d requests in 10 minutes, %d sent (%.3f%%; requests/K is %.0f), %d of them in the first second, %d after the first two minutes",
			k, m, s, 100*float64(s)/float64(m), float64(m)/k, sent[0], late)
		t.Log(fig)
		if float64(s) > float64(m)/k {
			t.Errorf("want at most requests/K sent to a dependency that fails every request; got %s", fig)
		}
	}
}

// A dependency that fails for five minutes and then recovers: while it
// fails, the throttler sends it a trickle; after, each accepted request
// lets K more through, and the refusals are gone within seconds. (Counting
// the throttler's own refusals as requests, as the SRE book's definition
// reads, kept the probability near 1: in this run no second after the
// outage sent 99% of its requests.)
func TestRecoveryAfterAnOutage(t *testing.T) {
	fake := clock.NewFake()
	rng := rand.New(rand.NewPCG(2, 2))
	th := throttle.New(throttle.WithClock(fake), throttle.WithRandom(rng.Float64))
	const outage, end = 5 * time.Minute, 10 * time.Minute
	down := errors.New("503")
	made, sent := simulate(th, fake, 1000, 20*time.Millisecond, end, func(at time.Duration) error {
		if at < outage {
			return down
		}
		return nil
	})
	// The first second after the outage from which on every second sends
	// at least 99% of its requests.
	back := -1
	for s := int(outage / time.Second); s < len(made); s++ {
		if float64(sent[s]) < 0.99*float64(made[s]) {
			back = -1
			continue
		}
		if back < 0 {
			back = s
		}
	}
	during := sum(sent[60:300])
	fig := fmt.Sprintf("during minutes 1 to 5 of the outage %d of %d requests sent; after it, every second sent 99%% or more from %ds on",
		during, sum(made[60:300]), back-int(outage/time.Second))
	t.Log(fig)
	if back < 0 || back-int(outage/time.Second) > 10 || during > sum(made[60:300])/100 {
		t.Errorf("want under 1%% sent during the outage and a full recovery within 10s after it; got %s", fig)
	}
}

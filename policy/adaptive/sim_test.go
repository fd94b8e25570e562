package adaptive_test

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// server is a model of a dependency with a capacity: a call that arrives
// with n calls in flight (its own included) takes base × max(1, n/C),
// times a jitter in [0.9, 1.1]. Past C calls at once it serves no more
// per second (C/base) and each call is slower: the latency of queueing.
//
// slow, if set, multiplies every latency at t: an incident that makes the
// dependency slower whatever its load.
type server struct {
	capacity func(t time.Duration) int // C at time t
	base     time.Duration
	slow     func(t time.Duration) float64
	inFlight int
}

func (s *server) latency(t time.Duration, rng *rand.Rand) time.Duration {
	c := float64(s.capacity(t))
	f := max(1, float64(s.inFlight)/c) * (0.9 + 0.2*rng.Float64())
	if s.slow != nil {
		f *= s.slow(t)
	}
	return time.Duration(float64(s.base) * f)
}

// simRun is the schedule and the figures of one simulated run.
type simRun struct {
	lim      *adaptive.Limiter
	fake     *clock.Fake
	srv      *server
	rate     func(t time.Duration) float64 // arrivals per second at t
	duration time.Duration
	seed     uint64

	// Figures, per measured interval (see between).
	lat       []sample  // latency of each call that ended, with its end time
	limits    []sample  // the limit every 100ms
	baselines []sample  // the baseline every 100ms
	rejected  []float64 // refusal times, in seconds
}

type sample struct {
	at time.Duration
	v  float64
}

// completion is a call in flight at the server.
type completion struct {
	at, start time.Duration
	permit    *adaptive.Permit
}

type completions []*completion

func (h completions) Len() int           { return len(h) }
func (h completions) Less(i, j int) bool { return h[i].at < h[j].at }
func (h completions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *completions) Push(x any)        { *h = append(*h, x.(*completion)) }
func (h *completions) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// run drives the limiter with Poisson arrivals in virtual time: a
// discrete-event loop that moves the fake clock to each arrival and each
// end, in order. Nothing sleeps; the run is a function of its seed.
func (r *simRun) run() {
	rng := rand.New(rand.NewPCG(r.seed, 1))
	ctx := context.Background()
	origin := r.fake.Now()
	var h completions
	next := time.Duration(0)
	nextSample := time.Duration(0)
	arrival := func() time.Duration {
		rate := r.rate(next)
		return next + time.Duration(rng.ExpFloat64()/rate*float64(time.Second))
	}
	next = arrival()
	for next < r.duration || h.Len() > 0 {
		at := next
		isEnd := h.Len() > 0 && (h[0].at <= next || next >= r.duration)
		if isEnd {
			at = h[0].at
		}
		for nextSample <= at {
			st := r.lim.Stats()
			r.limits = append(r.limits, sample{nextSample, float64(st.Limit)})
			r.baselines = append(r.baselines, sample{nextSample, float64(st.Baseline)})
			nextSample += 100 * time.Millisecond
		}
		r.fake.Set(origin.Add(at))
		if isEnd {
			c := heap.Pop(&h).(*completion)
			r.srv.inFlight--
			c.permit.Done(nil)
			r.lat = append(r.lat, sample{at, float64(at - c.start)})
			continue
		}
		p := new(adaptive.Permit)
		var err error
		*p, err = r.lim.Acquire(ctx)
		if err != nil {
			r.rejected = append(r.rejected, at.Seconds())
		} else {
			r.srv.inFlight++
			heap.Push(&h, &completion{at: at + r.srv.latency(at, rng), start: at, permit: p})
		}
		next = arrival()
	}
}

// between returns the latencies of the calls that ended in [from, to), and
// their throughput per second.
func (r *simRun) between(from, to time.Duration) (lat []float64, perSecond float64) {
	for _, s := range r.lat {
		if s.at >= from && s.at < to {
			lat = append(lat, s.v)
		}
	}
	return lat, float64(len(lat)) / (to - from).Seconds()
}

// quantile returns the q-quantile of xs (nearest rank), as a duration.
func quantile(xs []float64, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return time.Duration(s[max(i, 0)])
}

// limitAt returns the limit sampled last at or before t.
func (r *simRun) limitAt(t time.Duration) float64 { return at(r.limits, t) }

// at returns the value of samples sampled last at or before t.
func at(samples []sample, t time.Duration) float64 {
	v := 0.0
	for _, s := range samples {
		if s.at > t {
			break
		}
		v = s.v
	}
	return v
}

// peak returns the highest value of samples in [from, to).
func peak(samples []sample, from, to time.Duration) float64 {
	v := 0.0
	for _, s := range samples {
		if s.at >= from && s.at < to {
			v = max(v, s.v)
		}
	}
	return v
}

// firstTime returns the first sample time at or after from when cond holds
// for the limit and keeps holding for hold; -1 if never.
func (r *simRun) firstTime(from, hold time.Duration, cond func(limit float64) bool) time.Duration {
	start := time.Duration(-1)
	for _, s := range r.limits {
		if s.at < from {
			continue
		}
		if !cond(s.v) {
			start = -1
			continue
		}
		if start < 0 {
			start = s.at
		}
		if s.at-start >= hold {
			return start - from
		}
	}
	return -1
}

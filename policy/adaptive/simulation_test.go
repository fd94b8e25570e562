package adaptive_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// The simulated dependency: capacity C = 20 calls at once, 20ms each
// without queueing, so it serves at most 1000 calls a second.
const (
	simC    = 20
	simBase = 20 * time.Millisecond
	simCap  = simC / (float64(simBase) / float64(time.Second)) // calls per second
)

// algorithms are the limit algorithms under test, with the time each is
// given to follow the capacity down and to climb back: AIMD adds one to
// the limit per window, so it climbs back more slowly.
var algorithms = []struct {
	name     string
	alg      adaptive.Algorithm
	down, up time.Duration
}{
	{"Gradient2", adaptive.Gradient2{}, 10 * time.Second, 10 * time.Second},
	{"Vegas", adaptive.Vegas{}, 10 * time.Second, 10 * time.Second},
	{"AIMD", adaptive.AIMD{}, 10 * time.Second, 15 * time.Second},
}

// noLoadP99 runs the dependency at half its capacity, through a limiter,
// and returns the p99 latency: the latency without queueing that the
// overloaded runs are held to.
func noLoadP99(t *testing.T) time.Duration {
	fake := clock.NewFake()
	r := &simRun{
		lim: adaptive.New(adaptive.WithClock(fake)), fake: fake,
		srv:  &server{base: simBase, capacity: func(time.Duration) int { return simC }},
		rate: func(time.Duration) float64 { return simCap / 2 }, duration: 60 * time.Second, seed: 7,
	}
	r.run()
	lat, _ := r.between(10*time.Second, 60*time.Second)
	late := 0
	for _, at := range r.rejected {
		if at >= 10 {
			late++
		}
	}
	if late > 0 {
		t.Fatalf("at half the capacity the limiter refused %d calls after the first 10s (%d in all)", late, len(r.rejected))
	}
	return quantile(lat, 0.99)
}

// TestOverloadCapacityHalvesAndReturns runs the dependency under three
// times the calls it can serve, for 120s of virtual time: its capacity
// halves at 40s and returns at 80s. Each algorithm must keep the p99
// latency of the calls it admits within twice the no-load p99 while the
// throughput stays at 90% of the capacity or more, follow the capacity
// down within 10s, and climb back within 10s (AIMD, which adds one per
// window: 15s).
func TestOverloadCapacityHalvesAndReturns(t *testing.T) {
	t.Parallel()
	p99NoLoad := noLoadP99(t)
	t.Logf("no load (500 calls/s for a capacity of %.0f/s): p99 %v", simCap, p99NoLoad.Round(10*time.Microsecond))
	const halve, restore, end = 40 * time.Second, 80 * time.Second, 120 * time.Second
	for _, a := range algorithms {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			fake := clock.NewFake()
			r := &simRun{
				lim: adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(a.alg)), fake: fake,
				srv: &server{base: simBase, capacity: func(at time.Duration) int {
					if at >= halve && at < restore {
						return simC / 2
					}
					return simC
				}},
				rate: func(time.Duration) float64 { return 3 * simCap }, duration: end, seed: 1,
			}
			r.run()
			phases := []struct {
				name     string
				from, to time.Duration
				capacity float64
			}{
				{"3x overload", 10 * time.Second, halve, simCap},
				{"capacity halved", halve + 10*time.Second, restore, simCap / 2},
				{"capacity back", restore + 10*time.Second, end, simCap},
			}
			for _, ph := range phases {
				lat, tput := r.between(ph.from, ph.to)
				p99 := quantile(lat, 0.99)
				fig := fmt.Sprintf("%s, %v-%v: p99 %v (%.2f× the no-load p99 %v), throughput %.0f/s (%.1f%% of the capacity %.0f/s), limit %v",
					ph.name, ph.from, ph.to, p99.Round(10*time.Microsecond), float64(p99)/float64(p99NoLoad), p99NoLoad.Round(10*time.Microsecond),
					tput, 100*tput/ph.capacity, ph.capacity, r.limitAt(ph.to-time.Second))
				t.Log(fig)
				if p99 > 2*p99NoLoad || tput < 0.9*ph.capacity {
					t.Errorf("want p99 <= 2× the no-load p99 and throughput >= 90%% of the capacity; got %s", fig)
				}
			}
			before := r.meanLimit(halve-20*time.Second, halve)
			if a.name == "Gradient2" {
				control(t, p99NoLoad)
			}
			down := r.firstTime(halve, 5*time.Second, func(l float64) bool { return l <= 0.6*before })
			up := r.firstTime(restore, 5*time.Second, func(l float64) bool { return l >= 0.9*before })
			fig := fmt.Sprintf("limit %.1f before the capacity halved; down to 0.6× that (%.1f) %v after, back to 0.9× (%.1f) %v after it returned (-1ns: never)",
				before, 0.6*before, down, 0.9*before, up)
			t.Log(fig)
			if down < 0 || down > a.down || up < 0 || up > a.up {
				t.Errorf("want the limit to follow the capacity down within %v and back up within %v; got %s", a.down, a.up, fig)
			}
		})
	}
}

// control runs the same overload through a fixed limit of 1000 (Min =
// Max): without adaptation the calls queue at the dependency and the p99
// bound fails, so the test above is no empty one.
func control(t *testing.T, p99NoLoad time.Duration) {
	fake := clock.NewFake()
	r := &simRun{
		lim: adaptive.New(adaptive.WithClock(fake), adaptive.WithMinLimit(1000), adaptive.WithMaxLimit(1000)), fake: fake,
		srv:  &server{base: simBase, capacity: func(time.Duration) int { return simC }},
		rate: func(time.Duration) float64 { return 3 * simCap }, duration: 40 * time.Second, seed: 1,
	}
	r.run()
	lat, tput := r.between(10*time.Second, 40*time.Second)
	p99 := quantile(lat, 0.99)
	fig := fmt.Sprintf("control, a fixed limit of 1000, 3x overload, 10s-40s: p99 %v (%.1f× the no-load p99), throughput %.0f/s",
		p99.Round(time.Millisecond), float64(p99)/float64(p99NoLoad), tput)
	t.Log(fig)
	if p99 <= 2*p99NoLoad {
		t.Errorf("the control met the p99 bound: the simulation does not overload the dependency; %s", fig)
	}
}

// meanLimit returns the mean of the limits sampled in [from, to).
func (r *simRun) meanLimit(from, to time.Duration) float64 {
	sum, n := 0.0, 0
	for _, s := range r.limits {
		if s.at >= from && s.at < to {
			sum += s.v
			n++
		}
	}
	return sum / float64(n)
}

// TestLongIncidentDoesNotDriftTheBaseline makes the dependency five times
// slower at any load for three minutes, under 1.5 times its capacity
// (failsafe-go issue 127: an average baseline drifted up to the
// incident's latency, so the limit stopped falling and climbed back while
// the dependency was still unhealthy). With the default BaselineMemory
// (10m) the baseline stays the healthy latency for the whole incident and
// the limit stays down; with a memory shorter than the incident the
// baseline follows the incident after that memory, unless MaxLatency
// holds it; after the incident the limit climbs back from Min within 15s.
func TestLongIncidentDoesNotDriftTheBaseline(t *testing.T) {
	t.Parallel()
	const incident, over, end = 60 * time.Second, 240 * time.Second, 270 * time.Second
	run := func(opts ...adaptive.Option) *simRun {
		fake := clock.NewFake()
		r := &simRun{
			lim: adaptive.New(append([]adaptive.Option{adaptive.WithClock(fake)}, opts...)...), fake: fake,
			srv: &server{base: simBase, capacity: func(time.Duration) int { return simC }, slow: func(at time.Duration) float64 {
				if at >= incident && at < over {
					return 5
				}
				return 1
			}},
			rate: func(time.Duration) float64 { return 1.5 * simCap }, duration: end, seed: 3,
		}
		r.run()
		return r
	}
	healthy := func(r *simRun) (baseline, limit float64) {
		return at(r.baselines, incident), r.meanLimit(incident-20*time.Second, incident)
	}

	r := run()
	base, before := healthy(r)
	late := incident + 30*time.Second
	peakBase, peakLimit := peak(r.baselines, late, over), peak(r.limits, late, over)
	back := r.firstTime(over, 5*time.Second, func(l float64) bool { return l >= 0.9*before })
	fig := fmt.Sprintf("healthy: baseline %v, limit %.1f; from 30s into the incident to its end (2m30s): baseline at most %v, limit at most %.0f; limit back to 0.9× %v after it ended",
		time.Duration(base), before, time.Duration(peakBase), peakLimit, back)
	t.Log("BaselineMemory 10m: " + fig)
	if peakBase > 1.001*base || peakLimit > 0.25*before || back < 0 || back > 15*time.Second {
		t.Errorf("BaselineMemory 10m: want the baseline to stay at the healthy one, the limit at most a quarter of the healthy limit during the incident, and back within 15s (from Min); got %s", fig)
	}

	// A memory shorter than the incident: after it, the incident's latency
	// is the new normal and the limit climbs back during the incident.
	r = run(adaptive.WithBaselineMemory(time.Minute))
	base, before = healthy(r)
	drifted := peak(r.baselines, incident+90*time.Second, over)
	fig = fmt.Sprintf("healthy baseline %v; baseline %v 90s into the incident, limit %.0f at its end (healthy %.1f)",
		time.Duration(base), time.Duration(drifted), r.limitAt(over-time.Second), before)
	t.Log("BaselineMemory 1m: " + fig)
	if drifted < 4*base || r.limitAt(over-time.Second) < 0.5*before {
		t.Errorf("BaselineMemory 1m: want the baseline to follow the incident after a minute and the limit to climb back; got %s", fig)
	}

	// The same short memory with MaxLatency: the incident's windows never
	// become the baseline, and each cuts the limit.
	r = run(adaptive.WithBaselineMemory(time.Minute), adaptive.WithMaxLatency(3*simBase))
	base, before = healthy(r)
	peakLimit = peak(r.limits, late, over)
	fig = fmt.Sprintf("healthy baseline %v, limit %.1f; from 30s into the incident: baseline at most %v, limit at most %.0f",
		time.Duration(base), before, time.Duration(peak(r.baselines, late, over)), peakLimit)
	t.Log("BaselineMemory 1m, MaxLatency 60ms: " + fig)
	if peak(r.baselines, late, over) > 3*float64(simBase) || peakLimit > 0.25*before {
		t.Errorf("BaselineMemory 1m, MaxLatency 60ms: want the baseline under MaxLatency and the limit down for the whole incident; got %s", fig)
	}
}

// TestOneFastWindowDoesNotPinTheLimit: under 1.5 times its capacity, the
// dependency answers one second of calls far faster than it can (50µs,
// or at once: a cache, an error page served as a success, a clock's
// resolution) and then as before. That one window must not become the
// baseline, against which every normal window would read as queueing
// for BaselineMemory: 60s after the normal latencies return, the limit
// is back to 0.9× its healthy value (means over 20s), in every algorithm.
func TestOneFastWindowDoesNotPinTheLimit(t *testing.T) {
	t.Parallel()
	const blip, over, end = 30 * time.Second, 31 * time.Second, 111 * time.Second
	for _, a := range algorithms {
		for _, factor := range []float64{50e-6 / simBase.Seconds(), 0} {
			fake := clock.NewFake()
			r := &simRun{
				lim: adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(a.alg)), fake: fake,
				srv: &server{base: simBase, capacity: func(time.Duration) int { return simC }, slow: func(at time.Duration) float64 {
					if at >= blip && at < over {
						return factor
					}
					return 1
				}},
				rate: func(time.Duration) float64 { return 1.5 * simCap }, duration: end, seed: 5,
			}
			r.run()
			before := r.meanLimit(blip-20*time.Second, blip)
			after := r.meanLimit(over+time.Minute, end)
			low := lowest(r.limits, over, end)
			fig := fmt.Sprintf("%s, one window at %v per call: healthy limit %.1f, baseline %v; after it the limit fell to %.0f; 60s-80s after it, limit %.1f, baseline %v",
				a.name, time.Duration(factor*float64(simBase)), before, time.Duration(at(r.baselines, blip)), low,
				after, time.Duration(at(r.baselines, end-time.Second)))
			t.Log(fig)
			if after < 0.9*before {
				t.Errorf("want the limit back to 0.9× the healthy limit 60s after; got %s", fig)
			}
		}
	}
}

// lowest returns the lowest value of samples in [from, to).
func lowest(samples []sample, from, to time.Duration) float64 {
	v := math.Inf(1)
	for _, s := range samples {
		if s.at >= from && s.at < to {
			v = min(v, s.v)
		}
	}
	return v
}

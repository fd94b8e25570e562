package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// call is what a measuring layer saw of one attempt.
type call struct {
	Start, Took time.Duration // virtual time since the start of the run
	Err         error
}

// measured returns a policy set whose pipeline is inner (nil: none) over a
// layer that records every attempt in calls.
func measured(calls *[]call, inner func(env *Env) resilience.Policy[int]) PolicySet[int] {
	return PolicySet[int]{Name: "measured", Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		start := clk.Now()
		m := resilience.New("measure", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			t := clk.Now()
			v, err := next.Call(ctx)
			*calls = append(*calls, call{t.Sub(start), clk.Now().Sub(t), err})
			return v, err
		})
		if inner == nil {
			return m
		}
		return resilience.Then(inner(env), m)
	}}
}

func tooks(calls []call) []time.Duration {
	d := make([]time.Duration, len(calls))
	for i, c := range calls {
		d[i] = c.Took
	}
	slices.Sort(d)
	return d
}

// TestServerLatency: a call arriving with n calls in progress takes
// Base + n × Slope.
func TestServerLatency(t *testing.T) {
	var calls []call
	Run(Scenario{Server: Server{Base: 10 * time.Millisecond, Slope: 5 * time.Millisecond}, Clients: []Clients{{N: 4, Calls: 1}}}, measured(&calls, nil))
	want := []time.Duration{10 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}
	if diff := cmp.Diff(want, tooks(calls)); diff != "" {
		t.Errorf("latencies mismatch (-want +got):\n%s", diff)
	}
}

func TestServerDefaultBase(t *testing.T) {
	var calls []call
	Run(Scenario{Clients: []Clients{{Calls: 1}}}, measured(&calls, nil))
	if diff := cmp.Diff([]time.Duration{10 * time.Millisecond}, tooks(calls)); diff != "" {
		t.Errorf("the zero Server's latency mismatch (-want +got):\n%s", diff)
	}
}

func TestServerCapacity(t *testing.T) {
	var calls []call
	r := Run(Scenario{Server: Server{Capacity: 2}, Clients: []Clients{{N: 5, Calls: 1}}}, measured(&calls, nil))
	overloaded := 0
	for _, c := range calls {
		if errors.Is(c.Err, ErrOverloaded) {
			overloaded++
			if c.Took != 0 {
				t.Errorf("an overloaded call took %v, want 0 (refused at once)", c.Took)
			}
		}
	}
	if overloaded != 3 || r.Overloaded != 3 || r.Successes != 2 || r.Failures != 3 || slices.Max(r.InFlight) != 2 {
		t.Errorf("%d overloaded calls, %+v, most in flight %d; want 3 overloaded, 2 ok, at most 2 in flight", overloaded, r.Totals, slices.Max(r.InFlight))
	}
}

// TestServerOutages checks each mode, and the server around them.
func TestServerOutages(t *testing.T) {
	var calls []call
	s := Scenario{Duration: 10 * time.Second,
		Server:  Server{Outages: []Outage{{Start: 2 * time.Second, End: 4 * time.Second, Mode: Down}, {Start: 6 * time.Second, End: 8 * time.Second, Mode: Hang}}},
		Clients: []Clients{{Think: 100 * time.Millisecond}},
	}
	r := Run(s, measured(&calls, func(env *Env) resilience.Policy[int] {
		return timeout.New[int](500*time.Millisecond, timeout.WithClock(env.Clock()))
	}))
	seen := map[string]bool{}
	for _, c := range calls {
		if c.Start+c.Took >= s.Duration {
			continue // cut short by the end of the run
		}
		var want func(error) bool
		switch {
		case c.Start >= 2*time.Second && c.Start < 4*time.Second:
			want = func(err error) bool { return errors.Is(err, ErrDown) && c.Took == 0 }
		case c.Start >= 6*time.Second && c.Start < 8*time.Second:
			want = func(err error) bool {
				return errors.Is(err, context.DeadlineExceeded) && c.Took == 500*time.Millisecond
			}
		default:
			want = func(err error) bool { return err == nil && c.Took == 10*time.Millisecond }
		}
		if !want(c.Err) {
			t.Errorf("call at %v took %v and returned %v: not what the server does then", c.Start, c.Took, c.Err)
		}
		seen[c.Start.Truncate(2*time.Second).String()] = true
	}
	if len(seen) != 5 {
		t.Errorf("calls in %d of the five 2s windows, want all: %v", len(seen), seen)
	}
	if r.Down == 0 || r.Window(2*time.Second, 4*time.Second).Down != r.Down {
		t.Errorf("Down = %d, in the outage %d: want them all in the Down outage", r.Down, r.Window(2*time.Second, 4*time.Second).Down)
	}
}

// TestServerOrphanedWork: a call whose caller gave up goes on loading the
// server until its time is up.
func TestServerOrphanedWork(t *testing.T) {
	var calls []call
	r := Run(Scenario{Bucket: 10 * time.Millisecond, Server: Server{Base: 100 * time.Millisecond},
		Clients: []Clients{{Calls: 2}}}, measured(&calls, func(env *Env) resilience.Policy[int] {
		return timeout.New[int](50*time.Millisecond, timeout.WithClock(env.Clock()))
	}))
	if len(calls) != 2 || calls[1].Start != 50*time.Millisecond {
		t.Fatalf("calls = %+v, want two, the second at 50ms", calls)
	}
	// At 50ms the first call's caller has given up, but the server is
	// still at work on it: the second call finds it in progress.
	if got := r.InFlight[5]; got != 2 {
		t.Errorf("in flight at 50ms = %d, want 2 (the abandoned call and the new one)", got)
	}
}

// TestServerOrphanedWorkEnds: the work of a call whose caller gave up
// leaves the server when its time is up: the in-flight count goes back
// down, and a call that arrives after that finds nothing in progress.
func TestServerOrphanedWorkEnds(t *testing.T) {
	var calls []call
	r := Run(Scenario{Bucket: 10 * time.Millisecond, Duration: time.Second, Server: Server{Base: 100 * time.Millisecond, Slope: 50 * time.Millisecond},
		Clients: []Clients{{Calls: 1}, {Start: 60 * time.Millisecond, Calls: 1}, {Start: 300 * time.Millisecond, Calls: 1}}},
		measured(&calls, func(env *Env) resilience.Policy[int] {
			return timeout.New[int](50*time.Millisecond, timeout.WithClock(env.Clock()))
		}))
	if len(calls) != 3 {
		t.Fatalf("calls = %+v, want three", calls)
	}
	for _, c := range calls {
		if !errors.Is(c.Err, context.DeadlineExceeded) || c.Took != 50*time.Millisecond {
			t.Fatalf("calls = %+v, want each given up by its caller after 50ms", calls)
		}
	}
	// The call at 0 is at work until 100ms, the one at 60ms (Base + 1 ×
	// Slope) until 210ms: at 300ms the server has nothing in progress but
	// the new call.
	got := []int{r.InFlight[0], r.InFlight[6], r.InFlight[30]}
	if diff := cmp.Diff([]int{1, 2, 1}, got); diff != "" {
		t.Errorf("calls in progress at the server at 0, 60ms and 300ms mismatch (-want +got):\n%s", diff)
	}
}

func TestServerConflicts(t *testing.T) {
	var calls []call
	r := Run(Scenario{Server: Server{Base: 10 * time.Millisecond, Slope: time.Millisecond, Conflicts: true}, Clients: []Clients{{N: 3, Calls: 1}}},
		measured(&calls, nil))
	// The three read version 0; the first to finish (10ms) writes it; the
	// other two (11ms, 12ms) find it changed.
	if r.Successes != 1 || r.Conflicts != 2 || r.Failures != 2 {
		t.Errorf("%+v, want 1 write through and 2 conflicts", r.Totals)
	}
	for _, c := range calls {
		if c.Err != nil && (!errors.Is(c.Err, ErrConflict) || c.Took == 10*time.Millisecond) {
			t.Errorf("call %+v: want only the later calls to fail with ErrConflict", c)
		}
	}
}

func TestServerNoise(t *testing.T) {
	var calls []call
	Run(Scenario{Duration: time.Hour, Server: Server{Base: 20 * time.Millisecond, Noise: 5 * time.Millisecond}, Clients: []Clients{{Calls: 4000}}},
		measured(&calls, nil))
	d := tooks(calls)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	mean := sum / time.Duration(len(d))
	if mean < 19500*time.Microsecond || mean > 20500*time.Microsecond || d[0] == d[len(d)-1] || d[0] < 0 {
		t.Errorf("mean %v, range [%v, %v]: want about 20ms, spread, never negative", mean, d[0], d[len(d)-1])
	}
}

// TestServerSlow checks the long tail: about Slow of the calls take
// SlowLatency more, the others the model's latency.
func TestServerSlow(t *testing.T) {
	var calls []call
	Run(Scenario{Duration: time.Hour, Server: Server{Base: 20 * time.Millisecond, Slow: 0.1, SlowLatency: time.Second}, Clients: []Clients{{Calls: 4000}}},
		measured(&calls, nil))
	slow := 0
	for _, d := range tooks(calls) {
		switch d {
		case 20 * time.Millisecond:
		case 20*time.Millisecond + time.Second:
			slow++
		default:
			t.Fatalf("a call took %v, want 20ms or 1.02s", d)
		}
	}
	if share := float64(slow) / float64(len(calls)); share < 0.09 || share > 0.11 {
		t.Errorf("%d of %d calls slow (%.3f), want about 0.1", slow, len(calls), share)
	}
}

// TestServerWorkers: with 2 workers, of 5 calls that arrive at once two
// are served at once, two wait for them, and one waits for those: the
// latency of queueing.
func TestServerWorkers(t *testing.T) {
	var calls []call
	r := Run(Scenario{Server: Server{Base: 10 * time.Millisecond, Workers: 2}, Clients: []Clients{{N: 5, Calls: 1}}}, measured(&calls, nil))
	want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
	if diff := cmp.Diff(want, tooks(calls)); diff != "" {
		t.Errorf("latencies mismatch (-want +got):\n%s", diff)
	}
	if r.InFlight[0] != 5 {
		t.Errorf("calls in progress at the start = %d, want 5 (those waiting for a worker count)", r.InFlight[0])
	}
}

// TestServerResizes: one worker, two from 15ms, one again from 35ms. Six
// calls at 0 queue on the one worker; at 15ms the new worker takes the
// next waiting call at once; from 35ms the worker free last retires once
// its call is done.
func TestServerResizes(t *testing.T) {
	var calls []call
	Run(Scenario{
		Server: Server{Base: 10 * time.Millisecond, Workers: 1,
			Resizes: []Resize{{At: 15 * time.Millisecond, Workers: 2}, {At: 35 * time.Millisecond, Workers: 1}}},
		Clients: []Clients{{N: 3, Calls: 1}, {N: 3, Start: 20 * time.Millisecond, Calls: 1}, {N: 2, Start: 40 * time.Millisecond, Calls: 1}},
	}, measured(&calls, nil))
	// At 0: A 0-10, B 10-20, C 20-30 on one worker (the resize at 15ms
	// comes with the next arrival, at 20ms: D 20-30 on the new worker,
	// E 30-40, F 30-40). At 40ms one worker: G 40-50, H 50-60.
	var got []time.Duration
	for _, c := range calls {
		got = append(got, c.Start+c.Took)
	}
	slices.Sort(got)
	ms := time.Millisecond
	want := []time.Duration{10 * ms, 20 * ms, 30 * ms, 30 * ms, 40 * ms, 40 * ms, 50 * ms, 60 * ms}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("end times mismatch (-want +got):\n%s", diff)
	}
}

func TestServerWorkersValidate(t *testing.T) {
	for _, s := range []Server{
		{Workers: -1},
		{Resizes: []Resize{{At: 0, Workers: 1}}},
		{Workers: 1, Resizes: []Resize{{At: 0, Workers: 0}}},
		{Workers: 1, Resizes: []Resize{{At: 2, Workers: 1}, {At: 1, Workers: 1}}},
	} {
		if s.Validate() == nil {
			t.Errorf("%+v: Validate() = nil, want an error", s)
		}
	}
}

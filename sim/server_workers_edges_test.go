package sim

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// endTimes returns when each call ended (virtual time since the start of
// the run), sorted.
func endTimes(calls []call) []time.Duration {
	got := make([]time.Duration, len(calls))
	for i, c := range calls {
		got[i] = c.Start + c.Took
	}
	slices.Sort(got)
	return got
}

// A Resize applies from its At on, that instant included: calls arriving
// exactly at At find the new Workers. One worker busy from 0 to 10ms; a
// Resize to 2 at 10ms; two calls at 10ms are served at once, on the two.
func TestServerResizeAppliesAtItsInstant(t *testing.T) {
	var calls []call
	ms := time.Millisecond
	Run(Scenario{
		Server:  Server{Base: 10 * ms, Workers: 1, Resizes: []Resize{{At: 10 * ms, Workers: 2}}},
		Clients: []Clients{{Calls: 1}, {N: 2, Start: 10 * ms, Calls: 1}},
	}, measured(&calls, nil))
	if diff := cmp.Diff([]time.Duration{10 * ms, 20 * ms, 20 * ms}, endTimes(calls)); diff != "" {
		t.Errorf("end times mismatch (-want +got):\n%s", diff)
	}
}

// A server that shrinks retires the workers that are free last: of three
// workers busy until 10ms, 20ms and 30ms, a Resize to 2 at 5ms keeps
// those free at 10ms and 20ms. The two calls that arrive at 5ms (40ms and
// 50ms of latency: Base + 3 and 4 × Slope) take them: one from 10ms to
// 50ms, the other from 20ms to 70ms.
func TestServerShrinkRetiresTheWorkersFreeLast(t *testing.T) {
	var calls []call
	ms := time.Millisecond
	Run(Scenario{
		Server:  Server{Base: 10 * ms, Slope: 10 * ms, Workers: 3, Resizes: []Resize{{At: 5 * ms, Workers: 2}}},
		Clients: []Clients{{N: 3, Calls: 1}, {N: 2, Start: 5 * ms, Calls: 1}},
	}, measured(&calls, nil))
	if diff := cmp.Diff([]time.Duration{10 * ms, 20 * ms, 30 * ms, 50 * ms, 70 * ms}, endTimes(calls)); diff != "" {
		t.Errorf("end times mismatch (-want +got):\n%s", diff)
	}
}

// A call that waits for a worker and whose work would end past the
// largest time a Duration holds goes on taking its share of the server
// to the end of the run, its caller gone or not: its time never comes.
// One worker; A at 0 holds it for 2^62ns, B at 10ms waits for it, for as
// long; both callers give up after 50ms (a timeout). C, at 100ms, finds
// the three of them in progress.
func TestServerWorkersWorkPastTheEndOfTime(t *testing.T) {
	ms := time.Millisecond
	r := Run(Scenario{Duration: time.Second, Bucket: 10 * ms,
		Server:  Server{Base: time.Duration(math.MaxInt64/2 + 1), Slope: ms, Workers: 1},
		Clients: []Clients{{Calls: 1}, {Start: 10 * ms, Calls: 1}, {Start: 100 * ms, Calls: 1}},
	}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		return timeout.New[int](50*ms, timeout.WithClock(env.Clock()))
	}})
	if got := r.InFlight[10]; got != 3 {
		t.Errorf("calls in progress at 100ms = %d, want 3 (the two given up, still at work, and the new one)", got)
	}
	if r.Calls != 3 || r.Failures != 3 || r.Finished != 150*ms {
		t.Errorf("%+v, finished at %v: want 3 calls given up, the last at 150ms", r.Totals, r.Finished)
	}
}

// A worker that a Resize adds is free at once, though the others are
// busy: one worker busy from 0 to 100ms; a Resize to 2 at 10ms; the call
// at 10ms is served on the new worker, from 10ms to 110ms.
func TestServerWorkerAddedIsFreeAtOnce(t *testing.T) {
	var calls []call
	ms := time.Millisecond
	Run(Scenario{
		Server:  Server{Base: 100 * ms, Workers: 1, Resizes: []Resize{{At: 10 * ms, Workers: 2}}},
		Clients: []Clients{{Calls: 1}, {Start: 10 * ms, Calls: 1}},
	}, measured(&calls, nil))
	if diff := cmp.Diff([]time.Duration{100 * ms, 110 * ms}, endTimes(calls)); diff != "" {
		t.Errorf("end times mismatch (-want +got):\n%s", diff)
	}
}

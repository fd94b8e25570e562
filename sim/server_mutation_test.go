package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestServerOutageEndIsExclusive: an outage covers [Start, End): a call
// arriving at End is served.
func TestServerOutageEndIsExclusive(t *testing.T) {
	var calls []call
	Run(Scenario{
		Server:  Server{Outages: []Outage{{Start: 0, End: 10 * time.Millisecond, Mode: Down}}},
		Clients: []Clients{{Calls: 1, Start: 10*time.Millisecond - 1}, {Calls: 1, Start: 10 * time.Millisecond}},
	}, measured(&calls, nil))
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	for _, c := range calls {
		wantDown := c.Start < 10*time.Millisecond
		if down := errors.Is(c.Err, ErrDown); down != wantDown {
			t.Errorf("a call at %v: %v, want down %v", c.Start, c.Err, wantDown)
		}
	}
}

// TestServerCapacityOne: a capacity of 1 serves one call at a time.
func TestServerCapacityOne(t *testing.T) {
	var calls []call
	Run(Scenario{Server: Server{Capacity: 1}, Clients: []Clients{{N: 3, Calls: 1}}}, measured(&calls, nil))
	var errs []error
	for _, c := range calls {
		errs = append(errs, c.Err)
	}
	if diff := cmp.Diff([]error{ErrOverloaded, ErrOverloaded, nil}, errs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
		t.Errorf("3 calls at once on a server of capacity 1: errors mismatch (-want +got):\n%s", diff)
	}
}

// TestServerNoiseOfOneNanosecond: any Noise above 0 is applied, 1ns
// included (a normal draw of sd 1ns is at least 1ns in about a third of
// the calls).
func TestServerNoiseOfOneNanosecond(t *testing.T) {
	var calls []call
	Run(Scenario{Server: Server{Noise: time.Nanosecond}, Clients: []Clients{{Calls: 100}}}, measured(&calls, nil))
	varied := 0
	for _, c := range calls {
		if c.Took != 10*time.Millisecond {
			varied++
		}
	}
	if varied == 0 {
		t.Errorf("100 calls with 1ns of noise all took exactly 10ms")
	}
}

// TestServerNoiseNeverBelowZero: noise that would make a latency negative
// makes it 0, not more.
func TestServerNoiseNeverBelowZero(t *testing.T) {
	var calls []call
	Run(Scenario{Server: Server{Base: time.Nanosecond, Noise: 10 * time.Millisecond}, Clients: []Clients{{Calls: 20}}}, measured(&calls, nil))
	zero := 0
	for _, c := range calls {
		if c.Took < 0 {
			t.Errorf("a call took %v", c.Took)
		}
		if c.Took == 0 {
			zero++
		}
	}
	if zero == 0 {
		t.Errorf("20 calls of 1ns ± 10ms: none took 0; want about half")
	}
}

// TestServerServedCallLeaves: a served call no longer counts in the
// server's load: calls one after the other all take Base, whatever Slope.
func TestServerServedCallLeaves(t *testing.T) {
	var calls []call
	Run(Scenario{Server: Server{Slope: 5 * time.Millisecond}, Clients: []Clients{{Calls: 3}}}, measured(&calls, nil))
	want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	if diff := cmp.Diff(want, tooks(calls)); diff != "" {
		t.Errorf("3 calls one after the other: latencies mismatch (-want +got):\n%s", diff)
	}
}

// TestRunIncludesEventsAtItsEnd: the run covers [0, Duration]: a call that
// ends exactly at Duration ends as it would have, a success.
func TestRunIncludesEventsAtItsEnd(t *testing.T) {
	r := Run(Scenario{Duration: 10 * time.Millisecond, Clients: []Clients{{Calls: 1}}}, measured(new([]call), nil))
	if r.Calls != 1 || r.Successes != 1 || r.Finished != 10*time.Millisecond {
		t.Errorf("a 10ms call in a 10ms run: %d calls, %d successes, finished at %v; want 1, 1, 10ms", r.Calls, r.Successes, r.Finished)
	}
}

// TestServerOutageStartIsIncluded: an outage covers [Start, End): a call
// arriving at Start is in it, one just before is served.
func TestServerOutageStartIsIncluded(t *testing.T) {
	var calls []call
	ms := time.Millisecond
	Run(Scenario{
		Server:  Server{Outages: []Outage{{Start: 10 * ms, End: 20 * ms, Mode: Down}}},
		Clients: []Clients{{Calls: 1, Start: 10*ms - 1}, {Calls: 1, Start: 10 * ms}},
	}, measured(&calls, nil))
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	for _, c := range calls {
		wantDown := c.Start == 10*ms
		if down := errors.Is(c.Err, ErrDown); down != wantDown {
			t.Errorf("a call at %v: %v, want down %v", c.Start, c.Err, wantDown)
		}
	}
}

package throttle_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestSnapshot(t *testing.T) {
	random := never
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 { return random() }), throttle.WithName("api"))
	send(th, 2, nil)
	send(th, 6, errors.New("503")) // 8 requests, 2 accepts: p = (8-2·2)/9
	random = always
	refused := send(th, 5, nil)
	if refused != 5 {
		t.Fatalf("%d of 5 refused, want 5", refused)
	}
	if th.Name() != "api" {
		t.Errorf("Name() = %q, want api", th.Name())
	}
	s := th.Snapshot()
	got := map[string]float64{}
	for _, v := range s.Values {
		if v.Unit == "" || v.Help == "" {
			t.Errorf("value %s does not describe itself: %+v", v.Name, v)
		}
		got[v.Name] = v.Value
	}
	if s.Kind != throttle.Kind || s.Name != "api" || s.Refused != 5 {
		t.Errorf("Snapshot = %+v, want kind throttle, name api, 5 refused", s)
	}
	want := map[string]float64{"requests": 8, "accepts": 2, "accept_ratio": 0.25, "refuse_probability": 4.0 / 9}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Values mismatch (-want +got):\n%s", diff)
	}
	if err := telemetry.NewRegistry().Register(th); err != nil {
		t.Fatalf("Register = %v", err)
	}
}

// Each refusal is reported once, as throttle.refused with its error and
// the throttler's name, without allocating; the events agree with Stats.
// Requests let through report nothing.
func TestEventRefused(t *testing.T) {
	var events telemetry.Counter
	var last telemetry.Event
	obs := telemetry.Multi(&events, telemetry.ObserverFunc(func(e telemetry.Event) { last = e }))
	random := never
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(func() float64 { return random() }),
		throttle.WithName("api"), throttle.WithObserver(obs))
	send(th, 8, errors.New("503"))
	if n := events.Count("api", throttle.EventRefused); n != 0 {
		t.Fatalf("%d throttle.refused events before any refusal, want 0", n)
	}
	random = always
	if refused := send(th, 3, nil); refused != 3 {
		t.Fatalf("%d of 3 refused, want 3", refused)
	}
	if n := events.Count("api", throttle.EventRefused); n != 3 || n != th.Stats().Refused {
		t.Errorf("%d throttle.refused events, Stats().Refused %d; want 3 of each", n, th.Stats().Refused)
	}
	if last.Type != throttle.EventRefused || last.Name != "api" || !errors.Is(last.Err, throttle.ErrThrottled) || last.Kind() != throttle.Kind {
		t.Errorf("event %+v, want throttle.refused of api with ErrThrottled", last)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = th.Allow() }); n != 0 {
		t.Errorf("a refusal with an observer: %v allocs, want 0", n)
	}
}

// accept_ratio is 1 with no request, and accepts / requests from the
// first request on: 0 after a single one that failed.
func TestSnapshotAcceptRatioAtFewRequests(t *testing.T) {
	ratio := func(th *throttle.Throttler) float64 {
		for _, v := range th.Snapshot().Values {
			if v.Name == "accept_ratio" {
				return v.Value
			}
		}
		t.Fatal("no accept_ratio value")
		return 0
	}
	th := throttle.New(throttle.WithClock(clock.NewFake()), throttle.WithRandom(never))
	if got := ratio(th); got != 1 {
		t.Errorf("accept_ratio with no request = %v, want 1", got)
	}
	send(th, 1, errors.New("503"))
	if got := ratio(th); got != 0 {
		t.Errorf("accept_ratio after one failed request = %v, want 0", got)
	}
}

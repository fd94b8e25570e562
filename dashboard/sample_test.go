package dashboard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Guards of one name share a tile, each kind in its part; a name with
// only a Measure layer has a tile too.
func TestTilesByName(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	db := breaker.New(breaker.WithName("db"), breaker.WithClock(f))
	bh := newFake(bulkhead.Kind, "db")
	bh.set(func(s *telemetry.Snapshot) {
		s.Refused = 4
		s.Values = values("limit", 10, "in_flight", 3, "queued", 2)
	})
	lim := newFake(ratelimit.Kind, "api")
	lim.set(func(s *telemetry.Snapshot) {
		s.Refused = 7
		s.Values = values("rate", 100, "burst", 10, "tokens", 3.456)
	})
	for _, g := range []telemetry.Guard{db, bh, lim} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	Measure[int](d, "search")

	got := snap(t, d, false)
	closed := breakerValues(db.Snapshot())
	want := []tileJSON{ // the first snapshot's rates: the counts from zero over an Interval (the fake clock has not moved)
		{Name: "api", Guards: []guardJSON{{Kind: "ratelimit", Refused: 7, Values: jsonValues("rate", 100, "burst", 10, "tokens", 3.456)}},
			RefusalsPerSec: ptr(7)},
		{
			Name: "db", State: "closed",
			Guards: []guardJSON{
				{Kind: "breaker", State: "closed", Values: closed},
				{Kind: "bulkhead", Refused: 4, Values: jsonValues("limit", 10, "in_flight", 3, "queued", 2)},
			},
			RefusalsPerSec: ptr(4),
		},
		{Name: "search", Guards: []guardJSON{}, CallsPerSec: ptr(0), ErrorsPerSec: ptr(0), RefusalsPerSec: ptr(0)},
	}
	if diff := cmp.Diff(want, got.Guards); diff != "" {
		t.Errorf("tiles mismatch (-want +got):\n%s", diff)
	}
	wantDesc := map[string]map[string]valueDescJSON{
		"bulkhead":  {"limit": {Type: "gauge"}, "in_flight": {Type: "gauge"}, "queued": {Type: "gauge"}},
		"ratelimit": {"rate": {Type: "gauge"}, "burst": {Type: "gauge"}, "tokens": {Type: "gauge"}},
		"breaker":   {},
	}
	for _, v := range db.Snapshot().Values {
		wantDesc["breaker"][v.Name] = valueDescJSON{Unit: v.Unit, Type: v.Type.String(), Help: v.Help}
	}
	if diff := cmp.Diff(wantDesc, got.Values); diff != "" {
		t.Errorf("values described mismatch (-want +got):\n%s", diff)
	}
	if got.Version != 2 || got.Seq != 1 || got.IntervalSeconds != 1 {
		t.Errorf("version %d, seq %d, interval %v; want 2, 1, 1", got.Version, got.Seq, got.IntervalSeconds)
	}
}

// Open breakers first, then half-open ones, then the rest, each group in
// name order.
func TestTileOrder(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	state := func(name, s string) *fakeGuard {
		g := newFake("mine", name) // a guard of one's own, with states
		g.set(func(x *telemetry.Snapshot) { x.State = s })
		return g
	}
	forced := breaker.New(breaker.WithName("e-forced"), breaker.WithClock(f))
	forced.ForceOpen()
	for _, g := range []telemetry.Guard{
		state("a", "closed"), state("b", "open"), state("c", "half-open"), state("d", "open"),
		newFake(bulkhead.Kind, "0-bulkhead"), forced, state("f", "half-open"),
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, g := range snap(t, d, false).Guards {
		names = append(names, g.Name)
	}
	if diff := cmp.Diff([]string{"b", "d", "e-forced", "c", "f", "0-bulkhead", "a"}, names); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
	if g := snap(t, d, false).Guards[2]; !g.Forced || g.State != "open" {
		t.Errorf("forced breaker's tile = %+v, want forced open", g)
	}
}

// Rates are per second over the time since the last snapshot (the first
// snapshot's: see TestFirstSnapshotRates). The history gets one point per
// Interval, and a gap with no snapshot is filled with its average rate.
func TestRatesAndHistory(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	bh := newFake(bulkhead.Kind, "db")
	if err := reg.Register(bh); err != nil {
		t.Fatal(err)
	}
	p := Measure[int](d, "db")
	ctx := context.Background()
	calls := func(n, failures int) {
		for i := range n {
			var err error
			if i < failures {
				err = errBoom
			}
			_, _ = p.Do(ctx, op(f, 0, err))
		}
	}

	first := snap(t, d, true).Guards[0]
	if diff := cmp.Diff(&historyJSON{Calls: []float64{0}, Errors: []float64{0}}, first.History); diff != "" {
		t.Errorf("first history mismatch (-want +got):\n%s", diff)
	}

	f.Advance(time.Second)
	calls(25, 10)
	bh.set(func(s *telemetry.Snapshot) { s.Refused = 5 })
	g := snap(t, d, true).Guards[0]
	want := tileJSON{
		Name: "db", Guards: []guardJSON{{Kind: "bulkhead", Refused: 5, Values: jsonValues()}},
		CallsPerSec: ptr(25), ErrorsPerSec: ptr(10), RefusalsPerSec: ptr(5), ErrorPct: ptr(40),
		LatencyMs: &latencyJSON{P50: 0.000512, P90: 0.000512, P99: 0.000512}, // all 0 ns: the underflow bucket (< 1.024 µs) reads 512 ns
		History:   &historyJSON{Calls: []float64{0, 25}, Errors: []float64{0, 10}},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("after 1 s mismatch (-want +got):\n%s", diff)
	}

	// Three seconds without a snapshot: 30 calls, 3 failed.
	f.Advance(3 * time.Second)
	calls(30, 3)
	g = snap(t, d, true).Guards[0]
	want.CallsPerSec, want.ErrorsPerSec, want.RefusalsPerSec = ptr(10), ptr(1), ptr(0)
	want.ErrorPct = ptr(23.6) // 13 of the 55 calls in the last 10 s, to 0.1
	want.History = &historyJSON{Calls: []float64{0, 25, 10, 10, 10}, Errors: []float64{0, 10, 1, 1, 1}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("after a 3 s gap mismatch (-want +got):\n%s", diff)
	}

	// The history keeps the last HistoryLen points.
	for i := range HistoryLen + 5 {
		f.Advance(time.Second)
		calls(i%7, 0)
		snap(t, d, false)
	}
	h := snap(t, d, true).Guards[0].History
	if len(h.Calls) != HistoryLen || len(h.Errors) != HistoryLen {
		t.Fatalf("history of %d calls and %d errors, want %d each", len(h.Calls), len(h.Errors), HistoryLen)
	}
	if last := h.Calls[HistoryLen-1]; last != float64((HistoryLen+4)%7) {
		t.Errorf("last point %v, want the last second's %d calls", last, (HistoryLen+4)%7)
	}
	if first := h.Calls[0]; first != float64(5%7) {
		t.Errorf("oldest point %v, want %d (the 6th second of the loop)", first, 5%7)
	}
}

// The first frame has rates: the first snapshot's are the counts from
// zero over the time since the dashboard was made (at least an Interval),
// its history that many points of that average; a tile or pipeline that
// appears later has its counts from zero over the time since the
// snapshot before.
func TestFirstSnapshotRates(t *testing.T) {
	f := clock.NewFake()
	var events telemetry.Counter
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: &events, Clock: f})
	bh := newFake(bulkhead.Kind, "db")
	if err := errors.Join(reg.Register(bh), reg.RegisterPipeline("db", retry.New[int](retry.WithName("db")))); err != nil {
		t.Fatal(err)
	}
	p := Measure[int](d, "db")
	f.Advance(4 * time.Second)
	for i := range 40 {
		var err error
		if i < 8 {
			err = errBoom
		}
		_, _ = p.Do(context.Background(), op(f, 0, err))
	}
	bh.set(func(s *telemetry.Snapshot) { s.Refused = 12 })
	for range 6 {
		events.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "db"})
	}
	s := snap(t, d, true)
	g := s.Guards[0]
	want := tileJSON{
		Name: "db", Guards: []guardJSON{{Kind: "bulkhead", Refused: 12, Values: jsonValues()}},
		CallsPerSec: ptr(10), ErrorsPerSec: ptr(2), RefusalsPerSec: ptr(3), ErrorPct: ptr(20),
		LatencyMs: &latencyJSON{P50: 0.000512, P90: 0.000512, P99: 0.000512},
		History:   &historyJSON{Calls: []float64{10, 10, 10, 10}, Errors: []float64{2, 2, 2, 2}},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("first snapshot, 4 s after New, mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]pipeJSON{{Name: "db", Chain: "retry(db)", RetriesPerSec: ptr(1.5), FallbacksPerSec: ptr(0)}}, s.Pipelines); diff != "" {
		t.Errorf("first snapshot's pipelines mismatch (-want +got):\n%s", diff)
	}

	// A guard registered between two snapshots: its counts over the time between.
	late := newFake(ratelimit.Kind, "late")
	late.set(func(s *telemetry.Snapshot) { s.Refused = 5 })
	if err := reg.Register(late); err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Second)
	for _, g := range snap(t, d, true).Guards {
		if g.Name != "late" {
			continue
		}
		if g.RefusalsPerSec == nil || *g.RefusalsPerSec != 2.5 || len(g.History.Calls) != 0 {
			t.Errorf("a tile new since the last snapshot: refusals/s %v, history %+v; want 2.5 (5 refusals over 2 s), no calls", g.RefusalsPerSec, g.History)
		}
	}
}

// One snapshot per Interval slot, however often it is asked for.
func TestOneSnapshotPerSlot(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	f.Set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	_, a := d.current(f.Now(), false)
	f.Advance(999 * time.Millisecond)
	_, b := d.current(f.Now(), true)
	f.Advance(time.Millisecond)
	_, c := d.current(f.Now(), false)
	if a != 1 || b != 1 || c != 2 {
		t.Fatalf("seqs %d %d %d, want 1 1 2 (a new snapshot at the start of each second only)", a, b, c)
	}
	if got := untilNext(f.Now().Add(250 * time.Millisecond)); got != 750*time.Millisecond {
		t.Fatalf("untilNext at .250 = %v, want 750ms", got)
	}
	if got := untilNext(f.Now()); got != time.Second {
		t.Fatalf("untilNext at a slot's start = %v, want 1s", got)
	}
}

// Without Measure, a breaker's errors come from the Counter's
// breaker.failure events and its error % from its window; a pipeline's
// retries and fallbacks come from the Counter under the names its chain
// gives.
func TestCounterSources(t *testing.T) {
	f := clock.NewFake()
	var events telemetry.Counter
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: &events, Clock: f})
	b := breaker.New(breaker.WithName("pay"), breaker.WithClock(f), breaker.WithObserver(&events), breaker.WithThreshold(100))
	pipeline := resilience.Then(
		resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil }),
		retry.New[int](retry.WithName("pay")),
		breaker.Policy[int](b),
	)
	if err := errors.Join(reg.Register(b), reg.RegisterPipeline("checkout", pipeline)); err != nil {
		t.Fatal(err)
	}
	snap(t, d, false)
	f.Advance(time.Second)
	for i := range 4 {
		var err error
		if i%2 == 0 {
			err = errBoom
		}
		_, _ = breaker.Policy[int](b).Do(context.Background(), op(f, 0, err))
	}
	for range 3 {
		events.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "pay"})
	}
	events.Observe(telemetry.Event{Type: resilience.EventFallbackUsed, Name: "checkout"})
	events.Observe(telemetry.Event{Type: resilience.EventFallbackUsed, Name: "pay"}) // not this pipeline's fallback

	s := snap(t, d, true)
	want := tileJSON{
		Name:           "pay",
		State:          "closed",
		Guards:         []guardJSON{{Kind: "breaker", State: "closed", Values: breakerValues(b.Snapshot())}},
		ErrorsPerSec:   ptr(2),
		RefusalsPerSec: ptr(0),
		ErrorPct:       ptr(50),
		History:        &historyJSON{Calls: nil, Errors: []float64{0, 2}},
	}
	if diff := cmp.Diff([]tileJSON{want}, s.Guards); diff != "" {
		t.Errorf("tile mismatch (-want +got):\n%s", diff)
	}
	wantPipe := pipeJSON{Name: "checkout", Chain: "fallback > retry(pay) > breaker(pay)", RetriesPerSec: ptr(3), FallbacksPerSec: ptr(1)}
	if diff := cmp.Diff([]pipeJSON{wantPipe}, s.Pipelines); diff != "" {
		t.Errorf("pipelines mismatch (-want +got):\n%s", diff)
	}

	// Without a Counter, those numbers are unknown.
	d2 := New(reg, &Options{Clock: f})
	snap(t, d2, false)
	f.Advance(time.Second)
	s = snap(t, d2, true)
	if g := s.Guards[0]; g.ErrorsPerSec != nil || g.History.Errors != nil {
		t.Errorf("without a Counter: errorsPerSec %v, history errors %v; want null", g.ErrorsPerSec, g.History.Errors)
	}
	if p := s.Pipelines[0]; p.RetriesPerSec != nil || p.FallbacksPerSec != nil {
		t.Errorf("without a Counter: retries %v, fallbacks %v; want null", p.RetriesPerSec, p.FallbacksPerSec)
	}
}

func TestChainNames(t *testing.T) {
	for _, c := range []struct {
		chain              string
		retries, fallbacks []string
	}{
		{"fallback > retry(prices) > breaker(prices) > timeout(150ms)", []string{"prices"}, []string{"p"}},
		{"retry > breaker", []string{"p"}, nil},
		{"fallback(cache) > retry(a) > retry(b) > retry(a)", []string{"a", "b"}, []string{"cache"}},
		{"identity", nil, nil},
		{"retryish > fallbacks(x) > retry(", nil, nil},
	} {
		r, fb := chainNames("p", c.chain)
		if diff := cmp.Diff(c.retries, r); diff != "" {
			t.Errorf("chainNames(%q) retries mismatch (-want +got):\n%s", c.chain, diff)
		}
		if diff := cmp.Diff(c.fallbacks, fb); diff != "" {
			t.Errorf("chainNames(%q) fallbacks mismatch (-want +got):\n%s", c.chain, diff)
		}
	}
}

// values returns the Values of a fake guard: name, value, name, value...
func values(kv ...any) []telemetry.Value {
	var vs []telemetry.Value
	for i := 0; i < len(kv); i += 2 {
		v := telemetry.Value{Name: kv[i].(string)}
		switch x := kv[i+1].(type) {
		case int:
			v.Value = float64(x)
		case float64:
			v.Value = x
		}
		vs = append(vs, v)
	}
	return vs
}

// jsonValues returns the "values" of a guard in a snapshot: name, value,
// name, value...
func jsonValues(kv ...any) map[string]*float64 {
	m := map[string]*float64{}
	for _, v := range values(kv...) {
		m[v.Name] = ptr(v.Value)
	}
	return m
}

// breakerValues returns the "values" a breaker's snapshot s gives.
func breakerValues(s telemetry.Snapshot) map[string]*float64 {
	m := map[string]*float64{}
	for _, v := range s.Values {
		m[v.Name] = ptr(v.Value)
	}
	return m
}

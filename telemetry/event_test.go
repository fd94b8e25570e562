package telemetry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

// allTypes is every event type the package defines, by kind.
var allTypes = map[telemetry.Kind][]telemetry.Type{
	telemetry.Breaker: {telemetry.BreakerOpened, telemetry.BreakerHalfOpened, telemetry.BreakerClosed,
		telemetry.BreakerRefused, telemetry.BreakerFailure, telemetry.BreakerIgnored, telemetry.BreakerEvicted},
	telemetry.Retry:     {telemetry.RetryAttemptFailed, telemetry.RetryWaiting, telemetry.RetryGaveUp},
	telemetry.Timeout:   {telemetry.TimeoutExpired, telemetry.TimeoutAbandoned},
	telemetry.Hedge:     {telemetry.HedgeLaunched, telemetry.HedgeWon, telemetry.HedgeLosersCancelled},
	telemetry.Bulkhead:  {telemetry.BulkheadQueuedAdmitted, telemetry.BulkheadRefused},
	telemetry.RateLimit: {telemetry.RateLimitRefused, telemetry.RateLimitWaited},
	telemetry.Fallback:  {telemetry.FallbackUsed},
}

func TestTypeKind(t *testing.T) {
	seen := map[telemetry.Type]bool{}
	for kind, types := range allTypes {
		for _, typ := range types {
			if seen[typ] {
				t.Errorf("type %q defined twice", typ)
			}
			seen[typ] = true
			if got := typ.Kind(); got != kind {
				t.Errorf("%q.Kind() = %q, want %q", typ, got, kind)
			}
			if got := (telemetry.Event{Type: typ}).Kind(); got != kind {
				t.Errorf("Event{Type: %q}.Kind() = %q, want %q", typ, got, kind)
			}
		}
	}
	if got := telemetry.Type("nodot").Kind(); got != "" {
		t.Errorf(`Type("nodot").Kind() = %q, want ""`, got)
	}
}

func TestMulti(t *testing.T) {
	var got []string
	obs := func(name string) telemetry.Observer {
		return telemetry.ObserverFunc(func(e telemetry.Event) { got = append(got, name+" "+string(e.Type)) })
	}
	m := telemetry.Multi(obs("a"), nil, obs("b"))
	m.Observe(telemetry.Event{Type: telemetry.BreakerOpened})
	m.Observe(telemetry.Event{Type: telemetry.RetryGaveUp})
	want := []string{"a breaker.opened", "b breaker.opened", "a retry.gave_up", "b retry.gave_up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Multi mismatch (-want +got):\n%s", diff)
	}
	if m := telemetry.Multi(nil, nil); m != nil {
		t.Fatalf("Multi(nil, nil) = %v, want nil", m)
	}
	one := obs("one")
	got = nil
	telemetry.Multi(nil, one).Observe(telemetry.Event{Type: telemetry.HedgeWon})
	if diff := cmp.Diff([]string{"one hedge.won"}, got); diff != "" {
		t.Fatalf("Multi of one mismatch (-want +got):\n%s", diff)
	}
}

func TestEventDoesNotAllocate(t *testing.T) {
	var sink telemetry.Event
	var o telemetry.Observer = telemetry.ObserverFunc(func(e telemetry.Event) { sink = e })
	err := error(nil)
	if n := testing.AllocsPerRun(100, func() {
		o.Observe(telemetry.Event{Type: telemetry.BreakerRefused, Name: "db", Err: err, Wait: 5})
	}); n != 0 {
		t.Fatalf("building and passing an Event allocates %v times", n)
	}
	_ = sink
}

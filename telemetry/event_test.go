package telemetry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// allTypes is every event type the package defines, by kind.
var allTypes = map[telemetry.Kind][]telemetry.Type{
	breaker.Kind: {breaker.EventOpened, breaker.EventHalfOpened, breaker.EventClosed,
		breaker.EventRefused, breaker.EventFailure, breaker.EventIgnored, breaker.EventEvicted},
	retry.Kind:                   {retry.EventAttemptFailed, retry.EventWaiting, retry.EventGaveUp},
	timeout.Kind:                 {timeout.EventExpired, timeout.EventAbandoned},
	hedge.Kind:                   {hedge.EventLaunched, hedge.EventWon, hedge.EventLosersCancelled},
	bulkhead.Kind:                {bulkhead.EventQueuedAdmitted, bulkhead.EventRefused},
	ratelimit.Kind:               {ratelimit.EventRefused, ratelimit.EventWaited},
	resilience.FallbackEventKind: {resilience.EventFallbackUsed},
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
	m.Observe(telemetry.Event{Type: breaker.EventOpened})
	m.Observe(telemetry.Event{Type: retry.EventGaveUp})
	want := []string{"a breaker.opened", "b breaker.opened", "a retry.gave_up", "b retry.gave_up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Multi mismatch (-want +got):\n%s", diff)
	}
	if m := telemetry.Multi(nil, nil); m != nil {
		t.Fatalf("Multi(nil, nil) = %v, want nil", m)
	}
	one := obs("one")
	got = nil
	telemetry.Multi(nil, one).Observe(telemetry.Event{Type: hedge.EventWon})
	if diff := cmp.Diff([]string{"one hedge.won"}, got); diff != "" {
		t.Fatalf("Multi of one mismatch (-want +got):\n%s", diff)
	}
}

func TestEventDoesNotAllocate(t *testing.T) {
	var sink telemetry.Event
	var o telemetry.Observer = telemetry.ObserverFunc(func(e telemetry.Event) { sink = e })
	err := error(nil)
	if n := testing.AllocsPerRun(100, func() {
		o.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db", Err: err, Wait: 5})
	}); n != 0 {
		t.Fatalf("building and passing an Event allocates %v times", n)
	}
	_ = sink
}

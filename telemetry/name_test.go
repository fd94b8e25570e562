package telemetry_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
)

func TestCheckName(t *testing.T) {
	for _, name := range []string{"", "payments", "café", "支付"} {
		telemetry.CheckName("x: WithName", name) // valid: no panic
	}
	got := func() (msg any) {
		defer func() { msg = recover() }()
		telemetry.CheckName("breaker: WithName", "db\xff")
		return nil
	}()
	if diff := cmp.Diff(`breaker: WithName("db\xff"): name must be valid UTF-8`, got); diff != "" {
		t.Errorf("panic mismatch (-want +got):\n%s", diff)
	}
}

// namedGuard is a guard of one's own, whose name no option checked.
type namedGuard string

func (g namedGuard) Name() string { return string(g) }

func (g namedGuard) Snapshot() telemetry.Snapshot {
	return telemetry.Snapshot{Kind: bulkhead.Kind, Name: string(g)}
}

func TestRegistryRejectsInvalidName(t *testing.T) {
	r := telemetry.NewRegistry()
	if err := r.Register(namedGuard("db\xff")); !errors.Is(err, telemetry.ErrInvalidName) {
		t.Errorf("Register of a guard named %q = %v, want ErrInvalidName", "db\xff", err)
	}
	if err := r.RegisterPipeline("p\xfe", resilience.Policy[int]{}); !errors.Is(err, telemetry.ErrInvalidName) {
		t.Errorf("RegisterPipeline(%q) = %v, want ErrInvalidName", "p\xfe", err)
	}
	if n := len(r.Snapshots()) + len(r.Pipelines()); n != 0 {
		t.Errorf("the registry holds %d entries, want none", n)
	}
}

// Every option that names a policy rejects a name that is not valid UTF-8,
// naming itself in the panic.
func TestWithNameRejectsInvalidUTF8(t *testing.T) {
	const bad = "db\xff"
	options := map[string]func(){
		"adaptive: WithName":           func() { adaptive.WithName(bad) },
		"breaker: WithName":            func() { breaker.WithName(bad) },
		"bulkhead: WithName":           func() { bulkhead.WithName(bad) },
		"chaos: WithName":              func() { chaos.WithName(bad) },
		"hedge: WithName":              func() { hedge.WithName(bad) },
		"ratelimit: WithName":          func() { ratelimit.WithName(bad) },
		"retry: WithName":              func() { retry.WithName(bad) },
		"throttle: WithName":           func() { throttle.WithName(bad) },
		"timeout: WithName":            func() { timeout.WithName(bad) },
		"resilience: WithFallbackName": func() { resilience.WithFallbackName(bad) },
	}
	for option, call := range options {
		got := func() (msg any) {
			defer func() { msg = recover() }()
			call()
			return nil
		}()
		if diff := cmp.Diff(option+`("db\xff"): name must be valid UTF-8`, got); diff != "" {
			t.Errorf("%s: panic mismatch (-want +got):\n%s", option, diff)
		}
	}
}

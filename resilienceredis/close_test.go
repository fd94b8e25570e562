package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// localEvents returns the events of type typ in rec, as type and error.
func localEvents(rec *eventlog.Recorder, typ telemetry.Type) []string {
	var out []string
	for _, e := range rec.All() {
		if e.Type == typ {
			out = append(out, string(e.Type)+": "+errString(e.Err))
		}
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// After Close a breaker decides locally for good, as while Redis is
// unreachable: its local breaker trips on the calls' own failures and
// refuses without calling the dependency, where a closed breaker that
// went on counting in a batch nobody sends would call it forever. Close
// emits one BreakerLocal event with ErrClosed, the snapshot says why, and
// the calls that would ask Redis return ErrClosed.
func TestBreakerAfterClose(t *testing.T) {
	ctx := ctxFor(t)
	var rec eventlog.Recorder
	b := NewBreaker(newClient(t), "closed", WithPrefix(testPrefix(t)), WithThreshold(2), WithObserver(&rec), WithTimeout(5*time.Second))
	calls := 0
	p := BreakerPolicy[int](b)
	fail := func(context.Context) (int, error) { calls++; return 0, errors.New("dependency down") }
	if _, err := p.Do(ctx, fail); err == nil || calls != 1 {
		t.Fatalf("before Close: Do = %v after %d calls, want the dependency's error after 1", err, calls)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"breaker.local: " + ErrClosed.Error()}, localEvents(&rec, BreakerLocal)); diff != "" {
		t.Errorf("BreakerLocal events mismatch (-want +got):\n%s", diff)
	}
	s := b.Snapshot()
	if s.Reason != ErrClosed.Error() || values(t, s)["local"] != 1 {
		t.Errorf("Snapshot after Close = %+v; want Reason %q and local 1", s, ErrClosed)
	}
	calls = 0
	var errs []error
	for range 4 {
		_, err := p.Do(ctx, fail)
		errs = append(errs, err)
	}
	if calls != 2 || !errors.Is(errs[2], breaker.ErrOpen) || !errors.Is(errs[3], breaker.ErrOpen) {
		t.Errorf("after Close: %d calls of the dependency, errors %v; want 2, then the local breaker open (ErrOpen)", calls, errs)
	}
	if err := b.Reset(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Reset after Close = %v, want ErrClosed", err)
	}
	if _, err := b.Shared(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Shared after Close = %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// After Close a limiter (and a keyed one) decides with its fallback, asks
// Redis nothing (the fleet's bucket keeps its token: another instance
// still takes it), emits LimiterLocal with ErrClosed per decision, and
// says so in its snapshot; Check returns ErrClosed.
func TestLimiterAfterClose(t *testing.T) {
	ctx := ctxFor(t)
	rdb, prefix := newClient(t), testPrefix(t)
	var rec eventlog.Recorder
	l := NewLimiter(rdb, "closed", slow, 1, WithPrefix(prefix), WithFallback(resilience.Off, 0), WithObserver(&rec))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if l.Allow(ctx) {
		t.Error("Allow after Close = true, want the fallback's refusal (it fails closed)")
	}
	if k, err := l.AllowAtMost(ctx, 1); k != 0 || !errors.Is(err, ratelimit.ErrLimited) {
		t.Errorf("AllowAtMost after Close = %d, %v; want the fallback's refusal", k, err)
	}
	if err := l.Wait(ctx); !errors.Is(err, ratelimit.ErrLimited) {
		t.Errorf("Wait after Close = %v; want the fallback's refusal", err)
	}
	want := []string{"ratelimit.local: " + ErrClosed.Error(), "ratelimit.local: " + ErrClosed.Error(), "ratelimit.local: " + ErrClosed.Error()}
	if diff := cmp.Diff(want, localEvents(&rec, LimiterLocal)); diff != "" {
		t.Errorf("LimiterLocal events mismatch (-want +got):\n%s", diff)
	}
	if s := l.Snapshot(); s.State != StateLocal || s.Reason != ErrClosed.Error() {
		t.Errorf("Snapshot after Close = %+v; want State %q, Reason %q", s, StateLocal, ErrClosed)
	}
	if err := l.Check(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Check after Close = %v, want ErrClosed", err)
	}
	if !NewLimiter(rdb, "closed", slow, 1, WithPrefix(prefix)).Allow(ctx) {
		t.Error("another instance found the bucket's token taken: the closed limiter asked Redis")
	}

	k := NewKeyedLimiter(rdb, "closedkeyed", slow, 1, WithPrefix(prefix), WithFallback(resilience.Off, 0))
	// A tenant's Close does nothing: the others (and it) stay shared.
	if err := k.Limiter("a").Close(); err != nil {
		t.Fatal(err)
	}
	if s := k.Snapshot(); s.State == StateLocal {
		t.Errorf("keyed Snapshot after a tenant's Close = %+v; want it not local (only KeyedLimiter.Close closes it)", s)
	}
	if !k.Allow(ctx, "b") || !k.Limiter("a").Allow(ctx) {
		t.Error("after a tenant's Close, a fresh tenant was refused: the KeyedLimiter was closed")
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if k.Allow(ctx, "t") || k.Limiter("u").Allow(ctx) {
		t.Error("a keyed limiter's Allow after Close = true, want the fallback's refusal")
	}
	if s := k.Snapshot(); s.State != StateLocal || s.Reason != ErrClosed.Error() {
		t.Errorf("keyed Snapshot after Close = %+v; want State %q, Reason %q", s, StateLocal, ErrClosed)
	}
}

// After Close a retry budget decides with its local budget, each retry a
// RetryBudgetLocal event with ErrClosed, and its snapshot says so.
func TestRetryBudgetAfterClose(t *testing.T) {
	var rec eventlog.Recorder
	b := NewRetryBudget(newClient(t), "closed", WithPrefix(testPrefix(t)), WithRatio(resilience.Off), WithMinPerSecond(0.1), WithObserver(&rec))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.Deposit()
	if !b.Withdraw() {
		t.Error("Withdraw after Close = false, want the local budget's floor to allow one")
	}
	if diff := cmp.Diff([]string{"retry.budget_local: " + ErrClosed.Error()}, localEvents(&rec, RetryBudgetLocal)); diff != "" {
		t.Errorf("RetryBudgetLocal events mismatch (-want +got):\n%s", diff)
	}
	if s := b.Snapshot(); s.State != StateLocal || s.Reason != ErrClosed.Error() {
		t.Errorf("Snapshot after Close = %+v; want State %q, Reason %q", s, StateLocal, ErrClosed)
	}
}

// A nil *RetryBudget given to retry.WithBudget is no budget: the policy
// retries as it would with none, instead of panicking at the first call.
func TestNilRetryBudgetIsNoBudget(t *testing.T) {
	var rb *RetryBudget
	p := retry.New[int](retry.WithBudget(rb), retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	calls := 0
	v, err := p.Do(ctxFor(t), func(context.Context) (int, error) {
		calls++
		if calls < 3 {
			return 0, errors.New("flaky")
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Errorf("Do = %d, %v after %d calls; want 7, nil after 3 (no budget)", v, err, calls)
	}
}

// A closed limiter leaves no goroutine behind: neither its check of the
// server in the background nor its round trips on goroutines of their own
// (a client without ContextTimeoutEnabled).
func TestLimiterCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer rdb.Close()
	l := NewLimiter(rdb, "closeleak", slow, 5, WithPrefix(testPrefix(t)))
	if !l.Allow(ctxFor(t)) { // answered by Redis: starts the first check
		t.Fatal("Allow = false on a full bucket")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
}

package resilienceredis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// fleetTotals returns the executions and retries over every bucket of the
// budget's hash in Redis.
func fleetTotals(t *testing.T, rdb *redis.Client, b *RetryBudget) (calls, retries int64) {
	t.Helper()
	h, err := rdb.HGetAll(context.Background(), b.keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	for f, v := range h {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("field %s = %q: %v", f, v, err)
		}
		if strings.HasPrefix(f, "c") {
			calls += n
		} else {
			retries += n
		}
	}
	return calls, retries
}

// Three instances sharing a budget, each flushing once per round (one
// FlushInterval), each execution wanting two retries: the fleet's retries
// stay within Ratio × executions + the instances' floors (MinPerSecond ×
// Window each) + the slack of one flush interval (Ratio × one round's
// executions, and one retry per instance for rounding); and Redis counted
// every execution and retry.
func TestRetryBudgetFleetBound(t *testing.T) {
	rdb, prefix := newClient(t), testPrefix(t)
	const n, rounds, perRound = 3, 100, 20
	// A long Timeout: a loaded machine's slow round trip is not a failed flush.
	c := RetryBudgetConfig{Name: "fleet", Prefix: prefix, Ratio: 0.1, MinPerSecond: 1, Window: 10 * time.Second, Timeout: 5 * time.Second}
	var inst []*RetryBudget
	for range n {
		inst = append(inst, newRetryBudget(rdb, c.Name, []RetryBudgetOption{WithRetryBudgetConfig(c)}))
	}
	var execs, granted int64
	for range rounds {
		for _, b := range inst {
			for range perRound {
				b.Deposit()
				execs++
				for range 2 {
					if b.Withdraw() {
						granted++
					}
				}
			}
		}
		for _, b := range inst {
			if !b.flush(true) {
				t.Fatalf("flush failed: %v", b.why())
			}
		}
	}
	floors := float64(n) * 1 * 10
	slack := 0.1*n*perRound + n
	if limit := 0.1*float64(execs) + floors + slack; float64(granted) > limit {
		t.Errorf("granted %d retries for %d executions, want at most %v (ratio %v + floors %v + slack %v)", granted, execs, limit, 0.1*float64(execs), floors, slack)
	}
	if float64(granted) < 0.09*float64(execs) {
		t.Errorf("granted %d retries for %d executions, want at least 90%% of the ratio's %v", granted, execs, 0.1*float64(execs))
	}
	gc, gr := fleetTotals(t, rdb, inst[0])
	if diff := cmp.Diff([2]int64{execs, granted}, [2]int64{gc, gr}); diff != "" {
		t.Errorf("Redis's counts {executions, retries} mismatch (-want +got):\n%s", diff)
	}
	ttl, err := rdb.PTTL(context.Background(), inst[0].keys[0]).Result()
	if err != nil || ttl <= 10*time.Second || ttl > 20*time.Second {
		t.Errorf("PTTL = %v, %v; want within (Window, 2 × Window]", ttl, err)
	}
}

// Two instances with their flushers (FlushInterval 5ms) behind real retry
// policies: after a healthy spell (executions, no retries) the fleet has a
// headroom of Ratio × its executions; when every call fails, the two spend
// it once between them, not once each. The Timeout is long, so that a
// loaded machine's slow flush does not hand the decisions to the local
// budgets, which know nothing of the fleet's spending (no decision here
// may be local).
func TestRetryBudgetSharesHeadroom(t *testing.T) {
	rdb, prefix := newClient(t), testPrefix(t)
	var rec eventlog.Recorder
	c := RetryBudgetConfig{Name: "headroom", Prefix: prefix, Ratio: 0.1, MinPerSecond: resilience.Off, FlushInterval: 5 * time.Millisecond,
		Timeout: 5 * time.Second, Observer: &rec}
	a, b := NewRetryBudget(rdb, c.Name, WithRetryBudgetConfig(c)), NewRetryBudget(rdb, c.Name, WithRetryBudgetConfig(c))
	defer a.Close()
	defer b.Close()
	const healthy, failing = 1000, 100
	ctx := ctxFor(t)
	ok := func(context.Context) (int, error) { return 1, nil }
	var mu sync.Mutex
	attempts := 0
	fail := func(context.Context) (int, error) { mu.Lock(); attempts++; mu.Unlock(); return 0, errors.New("down") }
	pols := []resilience.Policy[int]{
		retry.New[int](retry.WithBudget(a), retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))),
		retry.New[int](retry.WithBudget(b), retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))),
	}
	for _, p := range pols {
		for range healthy {
			p.Do(ctx, ok)
		}
	}
	redistest.Eventually(t, 5*time.Second, "the fleet's executions counted and read back", func() (bool, string) {
		calls, _ := fleetTotals(t, rdb, a)
		ha, hb := values(t, a.Snapshot())["headroom"], values(t, b.Snapshot())["headroom"]
		return calls == 2*healthy && ha+hb > 0.1*2*healthy-1, fmt.Sprintf("Redis counts %d executions, headrooms %v + %v", calls, ha, hb)
	})
	var wg sync.WaitGroup
	for _, p := range pols {
		wg.Go(func() {
			for range failing {
				p.Do(ctx, fail)
			}
		})
	}
	wg.Wait()
	// The bound of RetryBudget's doc: Ratio × the fleet's executions (+1
	// per instance, a share's rounding), plus what stale views let
	// through. Each flush grants an instance its share of the headroom
	// left as Redis sees it, without the other's retries not yet flushed;
	// a loaded machine holds the flushers up (CI saw 270). With two
	// instances that is at most the other's grant again: each share is at
	// most E/(E-failing) of the executions, E the fleet's, so the fleet
	// spends at most 1.5 × E/(E-failing) × Ratio × E. Not once each, which
	// would be about 440.
	retries := attempts - 2*failing
	e := float64(2 * (healthy + failing))
	if limit := 1.5*0.1*e*e/(e-failing) + 2; float64(retries) > limit {
		t.Errorf("%d retries, want at most %.1f: 1.5 × Ratio × the fleet's executions (+1 per instance), the most stale views let through", retries, limit)
	}
	if retries < 150 {
		t.Errorf("%d retries, want the headroom (about 200) spent", retries)
	}
	for _, e := range rec.All() {
		if e.Type == RetryBudgetLocal {
			t.Fatalf("a retry decided by the local budget (%v): Redis did not answer a flush within 5s", e.Err)
		}
	}
}

// When a flush fails the instance decides with its local budget, which
// counted its executions all along, and says so: a RetryBudgetLocal event
// per decision, its snapshot local with the reason. Once Redis answers a
// probe it is shared again.
func TestRetryBudgetFallsBackToLocal(t *testing.T) {
	s := redistest.Start(t)
	var rec eventlog.Recorder
	rdb := clientOf(t, s.Addr)
	b := newRetryBudget(rdb, "fallback", []RetryBudgetOption{WithRatio(0.5), WithMinPerSecond(resilience.Off), WithProbeInterval(time.Nanosecond), WithObserver(&rec)})
	for range 10 {
		b.Deposit()
	}
	if !b.flush(true) {
		t.Fatalf("flush failed: %v", b.why())
	}
	if st := b.Snapshot().State; st != StateShared {
		t.Fatalf("State = %q before the crash, want %q", st, StateShared)
	}
	s.Kill(t)
	if b.flush(true) {
		t.Fatal("a flush to a crashed server succeeded")
	}
	var got int
	for range 10 {
		if b.Withdraw() {
			got++
		}
	}
	if got != 5 { // the local budget: Ratio 0.5 × 10 executions
		t.Errorf("the local budget granted %d of 10 retries, want 5", got)
	}
	local := ofType(&rec, RetryBudgetLocal)
	snap := b.Snapshot()
	if len(local) != 10 || snap.State != StateLocal || snap.Reason == "" || snap.Reason != local[9].Err.Error() || snap.Refused != 5 {
		t.Fatalf("%d %s events (want 10), Snapshot %+v: want local, with the events' reason, 5 refused", len(local), RetryBudgetLocal, snap)
	}
	if v := values(t, snap); v["local"] != 1 || v["decisions_local"] != 10 || v["flushes_failed"] != 1 {
		t.Errorf("values = %v; want local 1, decisions_local 10, flushes_failed 1", v)
	}
	s.Restart(t)
	redistest.Eventually(t, 5*time.Second, "a probe answered", func() (bool, string) {
		return b.flush(true), fmt.Sprint(b.why())
	})
	if st := b.Snapshot().State; st != StateShared {
		t.Errorf("State = %q after Redis answered, want %q", st, StateShared)
	}
	b.Withdraw()
	if n := len(ofType(&rec, RetryBudgetLocal)); n != 10 {
		t.Errorf("%d %s events after Redis answered again, want still 10", n, RetryBudgetLocal)
	}
}

// A budget's snapshot has the common guard shape and registers in a
// telemetry.Registry; its counts are the instance's.
func TestRetryBudgetSnapshot(t *testing.T) {
	b := NewRetryBudget(newClient(t), "snapbudget", WithPrefix(testPrefix(t)), WithRatio(resilience.Off), WithMinPerSecond(0.1), WithWindow(time.Second))
	defer b.Close()
	b.Deposit()
	b.Deposit()
	b.Withdraw() // the floor: 0.1/s × 1 s = 0.1 retries, none
	s := b.Snapshot()
	if s.Kind != retry.Kind || s.Name != "snapbudget" || b.Name() != "snapbudget" || s.State != StateShared || s.Reason != "" || s.Refused != 1 {
		t.Errorf("Snapshot = %+v; want retry snapbudget, shared, no reason, 1 refused", s)
	}
	v := values(t, s)
	if v["executions"] != 2 || v["retries_granted"] != 0 || v["local"] != 0 || v["decisions_local"] != 0 {
		t.Errorf("values = %v; want 2 executions, nothing else", v)
	}
	reg := telemetry.NewRegistry()
	if err := reg.Register(b); err != nil {
		t.Errorf("Register = %v", err)
	}
}

// A nil client or an invalid configuration panics, naming the field and
// the value, with the message of Validate.
func TestRetryBudgetConfigValidate(t *testing.T) {
	rdb := newClient(t)
	tests := []struct {
		name string
		c    RetryBudgetConfig
		want string
	}{
		{"defaults", RetryBudgetConfig{Name: "ok"}, ""},
		// A zero Name means NewRetryBudget's: the config is valid.
		{"no name", RetryBudgetConfig{}, ""},
		{"only a ratio", RetryBudgetConfig{Ratio: 0.1}, ""},
		{"brace", RetryBudgetConfig{Name: "a{b"}, `resilienceredis: RetryBudgetConfig.Name must be non-empty, valid UTF-8 and hold no '{' or '}', got "a{b"`},
		{"prefix", RetryBudgetConfig{Name: "a", Prefix: "}"}, `resilienceredis: RetryBudgetConfig.Prefix must hold no '{' or '}', got "}"`},
		{"ratio", RetryBudgetConfig{Name: "a", Ratio: -2}, "resilienceredis: RetryBudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got -2"},
		{"ratio inf", RetryBudgetConfig{Name: "a", Ratio: math.Inf(1)}, "resilienceredis: RetryBudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got +Inf"},
		{"ratio NaN", RetryBudgetConfig{Name: "a", Ratio: math.NaN()}, "resilienceredis: RetryBudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got NaN"},
		{"floor", RetryBudgetConfig{Name: "a", MinPerSecond: -0.5}, "resilienceredis: RetryBudgetConfig.MinPerSecond must be finite and > 0, 0 (the default, 10) or Off (-1, no floor), got -0.5"},
		{"both off", RetryBudgetConfig{Name: "a", Ratio: resilience.Off, MinPerSecond: resilience.Off}, "resilienceredis: RetryBudgetConfig allows no retry at all: Ratio and MinPerSecond are both Off"},
		{"window", RetryBudgetConfig{Name: "a", Window: 9 * time.Millisecond}, "resilienceredis: RetryBudgetConfig.Window must be at least 10ms, or 0 (the default, 10s), got 9ms"},
		{"window at its minimum", RetryBudgetConfig{Name: "a", Window: 10 * time.Millisecond}, ""},
		{"window negative", RetryBudgetConfig{Name: "a", Window: -time.Second}, "resilienceredis: RetryBudgetConfig.Window must be at least 10ms, or 0 (the default, 10s), got -1s"},
		{"flush", RetryBudgetConfig{Name: "a", FlushInterval: 2 * time.Second}, "resilienceredis: RetryBudgetConfig.FlushInterval must be in [0, 1s] (0 means 50ms), got 2s"},
		{"timeout", RetryBudgetConfig{Name: "a", Timeout: -1}, "resilienceredis: RetryBudgetConfig.Timeout must be >= 0 (0 means 50ms), got -1ns"},
		{"probe", RetryBudgetConfig{Name: "a", ProbeInterval: -1}, "resilienceredis: RetryBudgetConfig.ProbeInterval must be >= 0 (0 means 1s), got -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			if nameProblem(tt.c.Name) != "" {
				return // the constructors' own check: TestConstructorsCheckArguments
			}
			defer func() {
				if r := recover(); tt.want == "" && r != nil || tt.want != "" && r != tt.want {
					t.Fatalf("NewRetryBudget panicked with %v, want %q", r, tt.want)
				}
			}()
			NewRetryBudget(rdb, orName(tt.c.Name, "a"), WithRetryBudgetConfig(tt.c)).Close()
		})
	}
}

func TestRetryBudgetConfigJSON(t *testing.T) {
	in := RetryBudgetConfig{Name: "a", Prefix: "p:", Ratio: 0.1, MinPerSecond: resilience.Off, Window: 5 * time.Second, FlushInterval: 20 * time.Millisecond, Timeout: time.Second, ProbeInterval: 2 * time.Second}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out RetryBudgetConfig
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("Unmarshal(%s) = %v", data, err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("JSON round trip of %s mismatch (-want +got):\n%s", data, diff)
	}
	if err := json.Unmarshal([]byte(`{"Ratioo": 1}`), &out); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// A budget's success path (Deposit) allocates nothing, and neither does a
// retry policy's successful execution through it.
func TestRetryBudgetDepositDoesNotAllocate(t *testing.T) {
	b := newRetryBudget(newClient(t), "allocs", []RetryBudgetOption{WithPrefix(testPrefix(t))})
	p := retry.New[int](retry.WithBudget(b))
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	if n := testing.AllocsPerRun(1000, func() { p.Do(ctx, op) }); n != 0 {
		t.Errorf("%v allocs per successful execution, want 0", n)
	}
}

// Close stops the flusher and leaves no goroutine behind, with a client
// whose round trips run on goroutines of their own too; a second Close
// does nothing.
func TestRetryBudgetCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer rdb.Close()
	b := NewRetryBudget(rdb, "close", WithPrefix(testPrefix(t)), WithFlushInterval(time.Millisecond))
	b.Deposit()
	redistest.Eventually(t, 5*time.Second, "a flush", func() (bool, string) {
		return values(t, b.Snapshot())["flushes"] > 0, "no flush yet"
	})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
}

// BenchmarkRetryBudgetSuccess is an execution whose first attempt succeeds
// through a retry policy with a RetryBudget (Deposit only, no round trip),
// beside the same with a local retry.Budget.
func BenchmarkRetryBudgetSuccess(b *testing.B) {
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	fleet := NewRetryBudget(newClient(b), "bench", WithPrefix(testPrefix(b)))
	defer fleet.Close()
	for name, budget := range map[string]retry.Budgeter{"fleet": fleet, "local": retry.NewBudget(retry.BudgetConfig{})} {
		b.Run(name, func(b *testing.B) {
			p := retry.New[int](retry.WithBudget(budget))
			b.ReportAllocs()
			for b.Loop() {
				p.Do(ctx, op)
			}
		})
	}
}

// Each option of NewRetryBudget sets its field of the budget's
// configuration, the shared ones (WithPrefix, WithTimeout,
// WithProbeInterval, WithObserver, WithFlushInterval) as for limiters and
// breakers; WithRetryBudgetConfig sets the non-zero fields and later
// options override them.
func TestRetryBudgetOptions(t *testing.T) {
	var rec eventlog.Recorder
	b := newRetryBudget(newClient(t), "opts", []RetryBudgetOption{
		WithRetryBudgetConfig(RetryBudgetConfig{Ratio: 0.3, Window: 3 * time.Second}),
		WithPrefix("p:"), WithTimeout(time.Second), WithProbeInterval(2 * time.Second),
		WithObserver(&rec), WithFlushInterval(20 * time.Millisecond),
		WithRatio(0.5), WithMinPerSecond(resilience.Off),
	})
	want := RetryBudgetConfig{Name: "opts", Prefix: "p:", Ratio: 0.5, MinPerSecond: resilience.Off, Window: 3 * time.Second,
		FlushInterval: 20 * time.Millisecond, Timeout: time.Second, ProbeInterval: 2 * time.Second}
	got := b.cfg
	if got.Observer != telemetry.Observer(&rec) {
		t.Errorf("Observer = %v, want the recorder", got.Observer)
	}
	got.Observer = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration mismatch (-want +got):\n%s", diff)
	}
	if w := newRetryBudget(newClient(t), "w", []RetryBudgetOption{WithWindow(time.Second)}).cfg.Window; w != time.Second {
		t.Errorf("WithWindow(1s): Window = %v", w)
	}
}

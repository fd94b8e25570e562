package resilienceredis

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
)

// values returns s's values by name, checking that each describes itself.
func values(t *testing.T, s telemetry.Snapshot) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, v := range s.Values {
		if v.Help == "" || v.Unit == "" {
			t.Errorf("value %s does not describe itself: %+v", v.Name, v)
		}
		m[v.Name] = v.Value
	}
	return m
}

// A limiter whose decisions Redis makes says so: state shared, its
// refusals, the decisions counted as shared; a KeyedLimiter sums its
// keys. Both register in a telemetry.Registry.
func TestLimiterSnapshotShared(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	l := NewLimiter(rdb, "snap", slow, 2, WithPrefix(testPrefix(t)))
	k := NewKeyedLimiter(rdb, "snapkeyed", slow, 1, WithPrefix(testPrefix(t)))
	for range 3 {
		l.Allow(ctx)
	}
	k.Allow(ctx, "a")
	k.Allow(ctx, "a")
	k.Limiter("b").Allow(ctx)
	s := l.Snapshot()
	if s.Kind != ratelimit.Kind || s.Name != "snap" || s.State != StateShared || s.Reason != "" || s.Refused != 1 {
		t.Errorf("Snapshot = %+v; want ratelimit snap, shared, no reason, 1 refused", s)
	}
	if diff := cmp.Diff(map[string]float64{"local": 0, "decisions_shared": 3, "decisions_local": 0}, values(t, s)); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	ks := k.Snapshot()
	if ks.Name != "snapkeyed" || k.Name() != "snapkeyed" || ks.State != StateShared || ks.Refused != 1 || ks.Keys != nil {
		t.Errorf("keyed Snapshot = %+v; want snapkeyed, shared, 1 refused, no Keys", ks)
	}
	if diff := cmp.Diff(map[string]float64{"local": 0, "decisions_shared": 3, "decisions_local": 0}, values(t, ks)); diff != "" {
		t.Errorf("keyed values mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ks, k.Limiter("c").Snapshot()); diff != "" {
		t.Errorf("a key's Limiter's snapshot is not the KeyedLimiter's (-keyed +key):\n%s", diff)
	}
	reg := telemetry.NewRegistry()
	for _, g := range []telemetry.Guard{l, k} {
		if err := reg.Register(g); err != nil {
			t.Errorf("Register(%s) = %v", g.Name(), err)
		}
	}
}

// A limiter that cannot reach Redis says it decides locally and why (the
// error its LimiterLocal events carry), and counts those decisions; once
// Redis answers again it is shared again.
func TestLimiterSnapshotLocal(t *testing.T) {
	ctx := ctxFor(t)
	s := redistest.Start(t)
	var rec eventlog.Recorder
	l := NewLimiter(clientOf(t, s.Addr), "snaplocal", slow, 1, WithObserver(&rec), WithProbeInterval(time.Hour))
	if !l.Allow(ctx) {
		t.Fatal("the first Allow was refused")
	}
	s.Kill(t)
	l.Allow(ctx) // fails over: the fallback's bucket is full, admitted
	l.Allow(ctx) // the fallback's, refused
	local := ofType(&rec, LimiterLocal)
	if len(local) != 2 {
		t.Fatalf("%d %s events for 2 local decisions: %v", len(local), LimiterLocal, rec.All())
	}
	snap := l.Snapshot()
	if snap.State != StateLocal || snap.Reason == "" || snap.Reason != local[1].Err.Error() || snap.Refused != 1 {
		t.Errorf("Snapshot = %+v; want local, with the events' reason %q, 1 refused", snap, local[1].Err)
	}
	if diff := cmp.Diff(map[string]float64{"local": 1, "decisions_shared": 1, "decisions_local": 2}, values(t, snap)); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
}

// A breaker's snapshot counts the outcomes the fence refused, and each
// fenced batch is a BreakerFenced event; its state and refusals are this
// instance's.
func TestBreakerSnapshotFenced(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	var rec eventlog.Recorder
	a := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour), WithObserver(&rec))
	b := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	a.sync()
	b.sync()
	fail(b)
	fail(b)
	b.flush() // trips: generation 2, open
	fail(a)
	succeed(a)
	a.flush() // a's batch, of generation 1, is fenced
	if err := fail(a); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("A's call after the fenced reply: %v, want ErrOpen", err)
	}
	s := a.Snapshot()
	if s.Kind != breaker.Kind || s.Name != "svc" || s.State != telemetry.StateOpen || s.Reason != "" || s.Refused != 1 {
		t.Errorf("Snapshot = %+v; want breaker svc, open, no reason, 1 refused", s)
	}
	want := map[string]float64{"local": 0, "generation": 2, "decisions_local": 0, "outcomes_sent": 0, "outcomes_fenced": 2, "batches_fenced": 1, "outcomes_dropped": 0}
	if diff := cmp.Diff(want, values(t, s)); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	fenced := ofType(&rec, BreakerFenced)
	if len(fenced) != 1 || fenced[0].Name != "svc" || !errors.Is(fenced[0].Err, ErrFenced) || fenced[0].Kind() != breaker.Kind {
		t.Errorf("events %+v, want one breaker.fenced of svc matching ErrFenced", rec.All())
	}
	bs := values(t, b.Snapshot())
	if bs["outcomes_sent"] != 2 || bs["outcomes_fenced"] != 0 {
		t.Errorf("B's values %v, want 2 outcomes sent, none fenced", bs)
	}
	if err := telemetry.NewRegistry().Register(a); err != nil {
		t.Errorf("Register = %v", err)
	}
}

// A breaker that cannot reach Redis decides alone: one BreakerLocal event,
// with why, the same reason in its snapshot, and its decisions counted as
// local.
func TestBreakerSnapshotLocal(t *testing.T) {
	s := redistest.Start(t)
	var rec eventlog.Recorder
	b := manual(t, s.Addr, testPrefix(t), WithObserver(&rec), WithTimeout(time.Second))
	b.sync()
	if snap := b.Snapshot(); snap.Reason != "" || values(t, snap)["local"] != 0 {
		t.Fatalf("Snapshot with Redis up = %+v, want shared, no reason", snap)
	}
	s.Kill(t)
	b.sync() // fails: the instance decides alone
	b.sync() // still down: no second event
	for range 3 {
		succeed(b)
	}
	local := ofType(&rec, BreakerLocal)
	if len(local) != 1 || local[0].Err == nil || local[0].Name != "svc" {
		t.Fatalf("events %+v, want one breaker.local of svc with why", rec.All())
	}
	snap := b.Snapshot()
	if snap.State != telemetry.StateClosed || snap.Reason != local[0].Err.Error() {
		t.Errorf("Snapshot = %+v; want closed (the local breaker's), reason %q", snap, local[0].Err)
	}
	got := values(t, snap)
	if got["local"] != 1 || got["decisions_local"] != 3 {
		t.Errorf("values %v, want local 1, 3 local decisions", got)
	}
}

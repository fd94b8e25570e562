package dashboard

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// op returns an op that takes d on the fake clock and returns err.
func op(f *clock.Fake, d time.Duration, err error) resilience.Op[int] {
	return func(ctx context.Context) (int, error) {
		f.Advance(d)
		return 1, err
	}
}

func newFakeDashboard(t testing.TB) (*Dashboard, *clock.Fake, *telemetry.Registry) {
	t.Helper()
	f := clock.NewFake()
	reg := telemetry.NewRegistry()
	return New(reg, &Options{Clock: f}), f, reg
}

func TestMeasureOutcomes(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	if got, want := p.String(), "measure(db)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	ctx := context.Background()
	for range 6 {
		_, _ = p.Do(ctx, op(f, 10*time.Millisecond, nil))
	}
	for range 3 {
		_, _ = p.Do(ctx, op(f, 200*time.Millisecond, errors.New("boom")))
	}
	_, _ = p.Do(ctx, op(f, 0, resilience.Refuse(breaker.ErrOpen, "db", time.Second)))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = p.Do(canceled, op(f, 5*time.Second, context.Canceled))

	r := d.meter("db").read(f.Now())
	got := r
	got.latency = [3]float64{}
	want := meterRead{calls: 11, failed: 3, refused: 1, winOK: 6, winFailed: 3, hasLatency: true}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(meterRead{})); diff != "" {
		t.Errorf("read mismatch (-want +got):\n%s", diff)
	}
	// 6 of 10 ms, 3 of 200 ms: p50 is 10 ms, p90 and p99 200 ms; the
	// refused and the canceled calls are not in the latencies.
	for i, want := range []float64{10e6, 200e6, 200e6} {
		if rel := math.Abs(r.latency[i]-want) / want; rel > 1.0/16 {
			t.Errorf("latency %v = %.3g ns, want %.3g", percentiles[i], r.latency[i], want)
		}
	}
}

// The window is the last 10 s: older calls leave the percentiles and the
// error %, but stay in the counts.
func TestMeasureWindow(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	ctx := context.Background()
	_, _ = p.Do(ctx, op(f, time.Second, errors.New("slow failure")))
	f.Advance(5 * time.Second)
	_, _ = p.Do(ctx, op(f, time.Millisecond, nil))
	m := d.meter("db")
	if r := m.read(f.Now()); r.winOK != 1 || r.winFailed != 1 || r.latency[2] < 0.9e9 {
		t.Fatalf("after 6 s: window ok %d failed %d, p99 %.3g ns; want both calls, p99 about 1 s", r.winOK, r.winFailed, r.latency[2])
	}
	f.Advance(5 * time.Second) // the failure, 11 s old, leaves the window
	r := m.read(f.Now())
	if r.winOK != 1 || r.winFailed != 0 || math.Abs(r.latency[2]-1e6) > 1e6/16 {
		t.Fatalf("after 11 s: window ok %d failed %d, p99 %.3g ns; want only the 1 ms success", r.winOK, r.winFailed, r.latency[2])
	}
	f.Advance(time.Hour)
	r = m.read(f.Now())
	if r.hasLatency || r.winOK != 0 || r.calls != 2 || r.failed != 1 {
		t.Fatalf("an hour later: %+v; want an empty window and the counts kept (2 calls, 1 failed)", r)
	}
	// A clock set back counts in the newest second.
	f.Set(f.Now().Add(-time.Minute))
	_, _ = p.Do(ctx, op(f, time.Millisecond, nil))
	if r := m.read(f.Now()); r.winOK != 1 {
		t.Fatalf("after the clock went back: window ok %d, want 1", r.winOK)
	}
}

func TestMeasurePanicIsAFailure(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	func() {
		defer func() {
			if r := recover(); r != "op panic" {
				t.Fatalf("recovered %v, want the op's panic to go on up", r)
			}
		}()
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) {
			f.Advance(time.Millisecond)
			panic("op panic")
		})
	}()
	if r := d.meter("db").read(f.Now()); r.calls != 1 || r.failed != 1 || !r.hasLatency {
		t.Fatalf("after a panic: %+v, want 1 call, 1 failure, with its duration", r)
	}
}

// Layers of one name share one meter, whatever their result type.
func TestMeasureOneMeterPerName(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	_, _ = Measure[int](d, "db").Do(context.Background(), op(f, 0, nil))
	_, _ = Measure[string](d, "db").Do(context.Background(), func(context.Context) (string, error) { return "", nil })
	_, _ = Measure[int](d, "other").Do(context.Background(), op(f, 0, nil))
	if r := d.meter("db").read(f.Now()); r.calls != 2 {
		t.Fatalf("meter db counted %d calls, want 2 (one per layer)", r.calls)
	}
	if n := len(d.meterList()); n != 2 {
		t.Fatalf("%d meters, want 2", n)
	}
}

func TestMeasurePanicsOnBadArguments(t *testing.T) {
	d, _, _ := newFakeDashboard(t)
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil dashboard", func() { Measure[int](nil, "x") }, "dashboard: Measure dashboard must not be nil"},
		{"empty name", func() { Measure[int](d, "") }, "dashboard: Measure name must not be empty"},
		{"nil registry", func() { New(nil, nil) }, "dashboard: New registry must not be nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != c.want {
					t.Fatalf("panic %v, want %q", r, c.want)
				}
			}()
			c.f()
		})
	}
}

func TestMeasureDoesNotAllocate(t *testing.T) {
	// On a fake clock: a new second's histogram is allocated once, on
	// its first use, and the real clock could cross into one.
	d, _, _ := newFakeDashboard(t)
	do := Measure[int](d, "db").Wrap(func(context.Context) (int, error) { return 1, nil })
	fail := Measure[int](d, "db").Wrap(func(context.Context) (int, error) { return 0, errBoom })
	ctx := context.Background()
	_, _ = do(ctx) // the first call allocates the histograms
	_, _ = fail(ctx)
	if n := testing.AllocsPerRun(1000, func() { _, _ = do(ctx); _, _ = fail(ctx) }); n != 0 {
		t.Fatalf("a call through Measure allocates %v times, want 0", n)
	}
}

var errBoom = errors.New("boom")

func BenchmarkMeasure(b *testing.B) {
	d := New(telemetry.NewRegistry(), nil)
	do := Measure[int](d, "db").Wrap(func(context.Context) (int, error) { return 1, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = do(ctx)
	}
}

package resiliencetest

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

func TestFixed(t *testing.T) {
	if got := Fixed(3 * time.Millisecond).Draw(); got != 3*time.Millisecond {
		t.Errorf("Draw = %v, want 3ms", got)
	}
	if got := (Latency{}).Draw(); got != 0 {
		t.Errorf("zero Latency: Draw = %v, want 0", got)
	}
	wantPanic(t, "resiliencetest: Fixed latency must be >= 0, got -1ns", func() { Fixed(-1) })
}

// draws returns n draws of l and their mean.
func draws(l Latency, n int) ([]time.Duration, time.Duration) {
	ds := make([]time.Duration, n)
	var sum time.Duration
	for i := range ds {
		ds[i] = l.Draw()
		sum += ds[i]
	}
	return ds, sum / time.Duration(n)
}

func TestUniform(t *testing.T) {
	ds, mean := draws(Uniform(10*time.Millisecond, 20*time.Millisecond, 1), 10000)
	for _, d := range ds {
		if d < 10*time.Millisecond || d > 20*time.Millisecond {
			t.Fatalf("Draw = %v, want in [10ms, 20ms]", d)
		}
	}
	if mean < 14900*time.Microsecond || mean > 15100*time.Microsecond {
		t.Errorf("mean %v, want about 15ms", mean)
	}
	if got := Uniform(time.Second, time.Second, 1).Draw(); got != time.Second {
		t.Errorf("Uniform(1s, 1s): %v, want 1s", got)
	}
	wantPanic(t, "resiliencetest: Uniform needs 0 <= lo <= hi, got lo 2s, hi 1s", func() { Uniform(2*time.Second, time.Second, 1) })
}

func TestExponential(t *testing.T) {
	ds, mean := draws(Exponential(20*time.Millisecond, 1), 20000)
	above := 0 // draws above 3 × mean: e^-3 ≈ 5% of them
	for _, d := range ds {
		if d < 0 {
			t.Fatalf("Draw = %v, want >= 0", d)
		}
		if d > 60*time.Millisecond {
			above++
		}
	}
	if mean < 19*time.Millisecond || mean > 21*time.Millisecond {
		t.Errorf("mean %v, want about 20ms", mean)
	}
	if above < 800 || above > 1200 {
		t.Errorf("%d of 20000 draws above 3 × mean, want about 1000 (a long tail)", above)
	}
	wantPanic(t, "resiliencetest: Exponential mean must be >= 0, got -1s", func() { Exponential(-time.Second, 1) })
}

func TestLatencyIsSeeded(t *testing.T) {
	for _, mk := range []func(seed uint64) Latency{
		func(s uint64) Latency { return Uniform(0, time.Second, s) },
		func(s uint64) Latency { return Exponential(time.Second, s) },
	} {
		a, _ := draws(mk(5), 8)
		b, _ := draws(mk(5), 8)
		c, _ := draws(mk(6), 8)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%v: same seed, different draws: %v, %v", mk(5), a, b)
			}
		}
		same := true
		for i := range a {
			same = same && a[i] == c[i]
		}
		if same {
			t.Errorf("%v: seeds 5 and 6 draw the same: %v", mk(5), a)
		}
	}
}

func TestDelay(t *testing.T) {
	fake := clock.NewFake()
	f := Delay(fake, Fixed(time.Second))
	errc := make(chan error, 1)
	go func() { errc <- f.Inject(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fake.BlockUntil(ctx, 1); err != nil {
		t.Fatal("the delay never waited on the clock")
	}
	fake.Advance(time.Second - 1)
	select {
	case err := <-errc:
		t.Fatalf("the delay ended after 1s-1ns, with %v", err)
	default:
	}
	fake.Advance(1)
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Delay = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delay did not end after 1s")
	}
}

func TestDelayCancelled(t *testing.T) {
	fake := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Delay(fake, Fixed(time.Hour)).Inject(ctx) }()
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Errorf("Delay = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delay did not end with its context")
	}
}

func TestLatencyString(t *testing.T) {
	for _, c := range []struct {
		l    Latency
		want string
	}{
		{Latency{}, "fixed(0s)"},
		{Fixed(time.Second), "fixed(1s)"},
		{Uniform(time.Millisecond, 2*time.Millisecond, 3), "uniform(1ms, 2ms, seed 3)"},
		{Exponential(time.Millisecond, 4), "exponential(1ms, seed 4)"},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("String = %q, want %q", got, c.want)
		}
	}
	if got, want := Delay(nil, Fixed(time.Second)).String(), "delay(fixed(1s))"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

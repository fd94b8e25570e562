package rapidgen

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// outcome runs f once on fake, driving the clock, and returns its error;
// it recovers a panic as the error "panic".
func outcome(t *rapid.T, fake *clock.Fake, f resiliencetest.Fault, ctx context.Context) (err error) {
	derr := resiliencetest.Drive(fake, 10*time.Millisecond, func() {
		defer func() {
			if recover() != nil {
				err = errors.New("panic")
			}
		}()
		err = f.Inject(ctx)
	})
	if derr != nil {
		t.Fatalf("%v: %v", f, derr)
	}
	return err
}

// TestFaultKinds checks that each kind draws faults that behave as that
// kind says.
func TestFaultKinds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		kind := Kind(rapid.IntRange(int(Healthy), int(Panic)).Draw(t, "kind"))
		f := Fault(fake, kind).Draw(t, "fault")
		ctx, cancel := context.WithCancel(context.Background())
		if kind == Hang {
			cancel() // so that the hang ends
		}
		defer cancel()
		err := outcome(t, fake, f, ctx)
		ok := false
		switch kind {
		case Healthy, Delay:
			ok = err == nil
		case Fail:
			ok = err == nil || err == resiliencetest.ErrInjected // a partial rate lets some through
		case RetryAfter:
			d, hinted := resilience.RetryAfter(err)
			ok = errors.Is(err, resiliencetest.ErrInjected) && hinted && d <= 10*time.Second
		case Hang:
			ok = err == context.Canceled
		case Panic:
			ok = err != nil && err.Error() == "panic"
		}
		if !ok {
			t.Fatalf("kind %d drew %v, which returned %v", kind, f, err)
		}
	})
}

// TestDefaultKindsEnd checks that faults of the default kinds end by
// themselves, without a context that ends.
func TestDefaultKindsEnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		f := Fault(fake).Draw(t, "fault")
		_ = outcome(t, fake, f, context.Background())
	})
}

func TestTimeline(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		span := Duration(0, time.Hour).Draw(t, "span")
		steps := drawSteps(t, span, Fault(fake))
		if len(steps) < 1 || len(steps) > 8 || steps[0].At != 0 {
			t.Fatalf("%d steps, the first at %v; want 1 to 8, the first at 0", len(steps), steps[0].At)
		}
		for i, s := range steps {
			if s.At > span || (i > 0 && s.At < steps[i-1].At) {
				t.Fatalf("step %d at %v: beyond span %v or before the step before", i, s.At, span)
			}
		}
		f := Timeline(fake, span).Draw(t, "timeline")
		for range 3 {
			_ = outcome(t, fake, f, context.Background())
			fake.Advance(span / 2)
		}
	})
}

func TestLatency(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := Latency().Draw(t, "latency")
		for range 10 {
			if d := l.Draw(); d < 0 || d > 250*time.Second {
				t.Fatalf("%v drew %v", l, d)
			}
		}
	})
}

func TestDuration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "lo"))
		hi := lo + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "width"))
		if d := Duration(lo, hi).Draw(t, "d"); d < lo || d > hi {
			t.Fatalf("Duration(%v, %v) drew %v", lo, hi, d)
		}
	})
}

// TestSettingsBuild checks that drawn settings build policies (none
// panics) that run: a retry of the drawn attempts over a breaker.
func TestSettingsBuild(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fake := clock.NewFake()
		rs := Retry().Draw(t, "retry")
		bs := Breaker().Draw(t, "breaker")
		ls := Limiter().Draw(t, "limiter")
		b := breaker.New(bs.Options(fake)...)
		_ = ls.New(fake)
		p := resilience.Then(retry.New[int](rs.Options(fake)...), breaker.Policy[int](b))
		dep := resiliencetest.NewDependency(1, resiliencetest.Fail(nil))
		if err := resiliencetest.Drive(fake, 10*time.Millisecond, func() { _, _ = p.Do(context.Background(), dep.Call) }); err != nil {
			t.Fatal(err)
		}
		if n := dep.Calls(); n < 1 || n > int64(rs.Attempts) {
			t.Fatalf("%v: %d calls, want 1 to %d", rs, n, rs.Attempts)
		}
	})
}

func TestInvalid(t *testing.T) {
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"rapidgen: Fault kind must be one of Healthy..Panic, got 9", func() { Fault(nil, 9) }},
		{"rapidgen: Timeline span must be >= 0, got -1s", func() { Timeline(nil, -time.Second) }},
		{"rapidgen: Duration needs lo <= hi, got lo 2s, hi 1s", func() { Duration(2*time.Second, time.Second) }},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("panic = %v, want %q", r, c.want)
				}
			}()
			c.f()
		}()
	}
}

func TestStrings(t *testing.T) {
	rs := RetrySettings{Attempts: 3, Backoff: Backoff().Example(1), MaxElapsed: 2 * time.Second}
	if got := rs.GoString(); !strings.HasPrefix(got, "retry{Attempts: 3, Backoff: ") || !strings.HasSuffix(got, ", MaxElapsed: 2s}") {
		t.Errorf("GoString = %q", got)
	}
	bs := BreakerSettings{Threshold: 5, Cooldown: time.Second, MaxTrials: 1, SuccessThreshold: 2}
	if got, want := bs.GoString(), "breaker{Threshold: 5, Cooldown: 1s, MaxTrials: 1, SuccessThreshold: 2}"; got != want {
		t.Errorf("GoString = %q, want %q", got, want)
	}
	if got, want := (LimiterSettings{Rate: 2.5, Burst: 3}).GoString(), "limiter{Rate: 2.5, Burst: 3}"; got != want {
		t.Errorf("GoString = %q, want %q", got, want)
	}
}

// A property's seed decides a drawn backoff's jitter: the same seed gives
// the same waits, so a failing case replays exactly.
func TestBackoffJitterReplaysFromSeed(t *testing.T) {
	waits := func(seed uint64) []time.Duration {
		var got []time.Duration
		rapid.Custom(func(t *rapid.T) int {
			s := Backoff().Draw(t, "backoff").WithJitter(backoff.Full)
			seq := s.Start()
			for range 8 {
				got = append(got, seq.Next())
			}
			return 0
		}).Example(int(seed))
		return got
	}
	a, b := waits(7), waits(7)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different waits: %v and %v", a, b)
	}
	differ := false
	for seed := range uint64(20) {
		if !slices.Equal(waits(seed), a) {
			differ = true
			break
		}
	}
	if !differ {
		t.Error("20 seeds gave the same waits: the jitter does not come from the seed")
	}
}

// Rand gives one source per seed: the same seed, the same numbers.
func TestRandFromSeed(t *testing.T) {
	draw := func(seed int) []uint64 {
		return rapid.Custom(func(t *rapid.T) []uint64 {
			r := Rand(t, "seed")
			return []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
		}).Example(seed)
	}
	if a, b := draw(3), draw(3); !slices.Equal(a, b) {
		t.Errorf("same seed, different numbers: %v and %v", a, b)
	}
}

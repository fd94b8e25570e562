package resiliencetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
)

// TestFaultsKeepTheirOwnSteps: Timeline, Sequence and Chain keep copies of
// what they are given: changing the caller's slice afterwards changes
// neither what the fault does nor how it prints.
func TestFaultsKeepTheirOwnSteps(t *testing.T) {
	fake := clock.NewFake()
	steps := []Step{{At: 0, Fault: Fail(nil)}}
	tl := Timeline(fake, steps...)
	faults := []Fault{Fail(nil), Healthy()}
	seq := Sequence(faults...)
	chained := []Fault{Healthy(), Fail(nil)}
	ch := Chain(chained...)
	steps[0].Fault = Healthy()
	faults[0] = Healthy()
	chained[1] = Healthy()

	ctx := context.Background()
	got := []any{tl.String(), tl.Inject(ctx), seq.String(), seq.Inject(ctx), ch.String(), ch.Inject(ctx)}
	want := []any{"timeline(0s fail)", ErrInjected, "sequence(fail, healthy)", ErrInjected, "chain(healthy, fail)", ErrInjected}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("after the caller changed its slices, mismatch (-want +got):\n%s", diff)
	}
}

// TestUniformReachesItsBounds: Uniform draws every whole nanosecond of
// [lo, hi], each about as often, hi too.
func TestUniformReachesItsBounds(t *testing.T) {
	l := Uniform(10, 12, 1)
	counts := make(map[time.Duration]int)
	const n = 3000
	for range n {
		counts[l.Draw()]++
	}
	for d := time.Duration(10); d <= 12; d++ {
		if c := counts[d]; c < n/3-200 || c > n/3+200 {
			t.Errorf("%v drawn %d times of %d, want about %d (counts %v)", d, c, n, n/3, counts)
		}
	}
	if len(counts) != 3 {
		t.Errorf("drew %v, want only 10ns to 12ns", counts)
	}
}

// TestZeroValues: the zero Latency is Fixed(0), the zero Fault Healthy;
// Chain of none is Healthy, of one is that one; Func without a name
// prints as "func".
func TestZeroValues(t *testing.T) {
	f := Func("", func(context.Context) error { return nil })
	got := []string{Latency{}.String(), Fault{}.String(), Chain().String(), Chain(Hang()).String(), f.String(), FailRate(0.25, 3).String()}
	want := []string{"fixed(0s)", "healthy", "healthy", "hang", "func", "fail-rate(0.25, seed 3)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions mismatch (-want +got):\n%s", diff)
	}
}

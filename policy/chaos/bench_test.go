package chaos

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// The benchmarks compare a call through a disabled chaos policy with the
// bare call of the op and with a call through a layer that only goes on
// (the cost of any layer of a pipeline); BenchmarkOverhead measures them
// side by side:
//
//	go test -run=^$ -bench=. ./policy/chaos/

var sink int

func op(context.Context) (int, error) { return 1, nil }

// call runs f b.N times and keeps the result alive.
func call(b *testing.B, f resilience.Op[int]) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		v, _ := f(ctx)
		sink += v
	}
}

func BenchmarkBare(b *testing.B) { call(b, opVar) }

func BenchmarkPassThrough(b *testing.B) {
	p := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) })
	call(b, p.Wrap(op))
}

// BenchmarkPassThenOff is the pass-through layer with a disabled
// chaos.fault inside it: against BenchmarkPassThrough, what adding the
// disabled layer to a pipeline costs.
func BenchmarkPassThenOff(b *testing.B) {
	p := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) })
	call(b, p.Then(off()["fault"]).Wrap(opVar))
}

// BenchmarkPassThenPass is two pass-through layers: against
// BenchmarkPassThrough, what adding any layer to a pipeline costs.
func BenchmarkPassThenPass(b *testing.B) {
	p := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) })
	call(b, p.Then(p).Wrap(opVar))
}

var errChaos = errors.New("chaos")

// off returns the three chaos policies on a disabled injector.
func off() map[string]resilience.Policy[int] {
	in := NewInjector(0.5)
	in.Disable()
	return map[string]resilience.Policy[int]{
		"fault":   Fault[int](in, func(context.Context) error { return errChaos }),
		"latency": Latency[int](in, nil, func() time.Duration { return time.Second }),
		"result":  Result[int](in, func(context.Context) (int, error) { return 2, nil }),
	}
}

func BenchmarkOff(b *testing.B) {
	for name, p := range off() {
		b.Run(name, func(b *testing.B) { call(b, p.Wrap(op)) })
	}
}

func BenchmarkOn(b *testing.B) {
	in := NewInjector(1)
	b.Run("fault", func(b *testing.B) {
		call(b, Fault[int](in, func(context.Context) error { return errChaos }).Wrap(op))
	})
	b.Run("result", func(b *testing.B) {
		call(b, Result[int](in, func(context.Context) (int, error) { return 2, nil }).Wrap(op))
	})
	half := NewInjector(0.5)
	b.Run("fault-half", func(b *testing.B) {
		call(b, Fault[int](half, func(context.Context) error { return errChaos }).Wrap(op))
	})
}

// opVar hides op from the compiler, so that a bare call stays an indirect
// call (as a call through a pipeline's op is) instead of being inlined.
var opVar = resilience.Op[int](op)

// BenchmarkOverhead measures, in one loop so that the machine's noise hits
// all alike, calls of:
//
//   - the op itself (op-ns/call);
//   - a one-layer pipeline, a pass-through layer (layer-ns/call);
//   - a one-layer pipeline, a disabled chaos.fault (chaos-ns/call);
//   - the pass-through layer with the disabled chaos.fault added inside it
//     (both-ns/call);
//   - the pass-through layer with another pass-through layer inside it
//     (passes-ns/call).
//
// Each iteration makes a batch of calls of each kind, in a rotating order;
// each metric is the median over the iterations (a batch that a busy
// machine preempts moves the median little, where it moved the mean by
// microseconds). check-ns/call is the median of the iterations' chaos -
// layer, the cost of the disabled chaos check itself; added-ns/call the
// median of both - layer, what adding the disabled chaos layer to a
// pipeline costs a call (the check and one more layer's call); and
// pass-added-ns/call the median of passes - layer, what adding any layer
// costs (one more layer's call, the floor of added-ns/call).
func BenchmarkOverhead(b *testing.B) {
	const batch = 1000
	pass := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		return next.Call(ctx)
	})
	chaosOff := off()["fault"]
	fs := []resilience.Op[int]{opVar, pass.Wrap(opVar), chaosOff.Wrap(opVar), pass.Then(chaosOff).Wrap(opVar), pass.Then(pass).Wrap(opVar)}
	ctx := context.Background()
	var t [5][]float64
	var check, added, passAdded []float64
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var took [5]float64
		for j := range fs {
			i := (n + j) % len(fs)
			start := time.Now()
			for range batch {
				v, _ := fs[i](ctx)
				sink += v
			}
			took[i] = float64(time.Since(start)) / batch
		}
		for i := range t {
			t[i] = append(t[i], took[i])
		}
		check = append(check, took[2]-took[1])
		added = append(added, took[3]-took[1])
		passAdded = append(passAdded, took[4]-took[1])
		n++
	}
	b.ReportMetric(median(t[0]), "op-ns/call")
	b.ReportMetric(median(t[1]), "layer-ns/call")
	b.ReportMetric(median(t[2]), "chaos-ns/call")
	b.ReportMetric(median(t[3]), "both-ns/call")
	b.ReportMetric(median(check), "check-ns/call")
	b.ReportMetric(median(t[4]), "passes-ns/call")
	b.ReportMetric(median(added), "added-ns/call")
	b.ReportMetric(median(passAdded), "pass-added-ns/call")
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

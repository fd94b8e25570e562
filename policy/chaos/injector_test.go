package chaos

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seeded returns a random func drawing from a seeded source, safe for
// simultaneous use, and a count of its draws.
func seeded(seed uint64) (func() float64, *int) {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed))
	n := new(int)
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		*n++
		return r.Float64()
	}, n
}

// hits counts the calls of Inject, out of n, that get chaos.
func hits(in *Injector, n int) int {
	h := 0
	for range n {
		if in.Inject() {
			h++
		}
	}
	return h
}

func TestInjectorRates(t *testing.T) {
	random, draws := seeded(1)
	if got := hits(NewInjector(0, WithRandom(random)), 1000); got != 0 {
		t.Errorf("rate 0: %d calls got chaos, want 0", got)
	}
	if got := hits(NewInjector(1, WithRandom(random)), 1000); got != 1000 {
		t.Errorf("rate 1: %d calls got chaos, want 1000", got)
	}
	if *draws != 0 {
		t.Errorf("rates 0 and 1 drew %d random numbers, want none", *draws)
	}
	const n = 20000
	if got := hits(NewInjector(0.25, WithRandom(random)), n); got < n/4-300 || got > n/4+300 {
		t.Errorf("rate 0.25: %d of %d calls got chaos, want about %d", got, n, n/4)
	}
	if *draws != n {
		t.Errorf("rate 0.25: %d draws for %d calls, want one each", *draws, n)
	}
}

func TestInjectorSeeded(t *testing.T) {
	pattern := func(seed uint64) string {
		random, _ := seeded(seed)
		in := NewInjector(0.5, WithRandom(random))
		var b strings.Builder
		for range 64 {
			if in.Inject() {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	if a, b := pattern(3), pattern(3); a != b {
		t.Errorf("same seed, different chaos:\n%s\n%s", a, b)
	}
	if a, b := pattern(3), pattern(4); a == b {
		t.Errorf("seeds 3 and 4 give the same chaos: %s", a)
	}
}

func TestInjectorSwitch(t *testing.T) {
	in := NewInjector(1)
	type state struct {
		Enabled bool
		Rate    float64
		Hits    int
	}
	look := func() state { return state{in.Enabled(), in.Rate(), hits(in, 10)} }
	var got []state
	got = append(got, look())
	in.Disable()
	got = append(got, look())
	in.SetRate(0) // while disabled: kept for later
	got = append(got, look())
	in.SetRate(1)
	in.Enable()
	got = append(got, look())
	in.SetRate(0)
	got = append(got, look())
	want := []state{
		{true, 1, 10},
		{false, 1, 0},
		{false, 0, 0},
		{true, 1, 10},
		{true, 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("switching mismatch (-want +got):\n%s", diff)
	}
}

// TestInjectorSwitchConcurrent switches an injector while calls run (run
// it with -race): every call sees the injector either on or off.
func TestInjectorSwitchConcurrent(t *testing.T) {
	in := NewInjector(1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					in.Inject()
				}
			}
		})
	}
	for i := range 1000 {
		if i%2 == 0 {
			in.Disable()
		} else {
			in.Enable()
		}
		in.SetRate(float64(i%3) / 2)
	}
	close(stop)
	wg.Wait()
	in.Disable()
	if got := hits(in, 100); got != 0 {
		t.Errorf("disabled after the storm: %d calls got chaos", got)
	}
}

func TestInjectorInvalidRate(t *testing.T) {
	for _, r := range []float64{-0.5, 1.01, math.NaN(), math.Inf(1)} {
		wantPanic(t, "chaos: rate must be in [0, 1], got", func() { NewInjector(r) })
		wantPanic(t, "chaos: rate must be in [0, 1], got", func() { NewInjector(0).SetRate(r) })
	}
}

func TestInjectorOffAllocs(t *testing.T) {
	in := NewInjector(0.5)
	in.Disable()
	if n := testing.AllocsPerRun(100, func() { in.Inject() }); n != 0 {
		t.Errorf("Inject allocates %v times, want 0", n)
	}
}

// wantPanic runs f and checks that it panics with a string that contains
// want.
func wantPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, want) {
			t.Errorf("panic = %v, want one containing %q", r, want)
		}
	}()
	f()
}

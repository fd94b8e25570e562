package resiliencetest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDependency(t *testing.T) {
	dep := NewDependency("ok", Sequence(Fail(nil), Healthy()))
	v, err := dep.Call(context.Background())
	if v != "" || err != ErrInjected {
		t.Errorf("first call = %q, %v; want \"\", ErrInjected", v, err)
	}
	v, err = dep.Call(context.Background())
	if v != "ok" || err != nil {
		t.Errorf("second call = %q, %v; want ok, nil", v, err)
	}
	want := Counts{Calls: 2, Successes: 1, Failures: 1, MaxInFlight: 1}
	if diff := cmp.Diff(want, dep.Counts()); diff != "" {
		t.Errorf("Counts mismatch (-want +got):\n%s", diff)
	}
	if got := dep.Calls(); got != 2 {
		t.Errorf("Calls = %d, want 2", got)
	}
}

func TestDependencySet(t *testing.T) {
	dep := NewDependency(1, Healthy())
	if _, err := dep.Call(context.Background()); err != nil {
		t.Fatalf("healthy call: %v", err)
	}
	dep.Set(Fail(nil))
	if _, err := dep.Call(context.Background()); err != ErrInjected {
		t.Errorf("after Set(Fail): %v, want ErrInjected", err)
	}
	dep.Set(Healthy())
	if _, err := dep.Call(context.Background()); err != nil {
		t.Errorf("after Set(Healthy): %v, want nil", err)
	}
}

func TestDependencyPanic(t *testing.T) {
	dep := NewDependency(0, Panic("boom"))
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		_, _ = dep.Call(context.Background())
	}()
	if diff := cmp.Diff(Counts{Calls: 1, Panics: 1, MaxInFlight: 1}, dep.Counts()); diff != "" {
		t.Errorf("Counts mismatch (-want +got):\n%s", diff)
	}
}

// TestDependencyInFlight holds calls in a hang and checks InFlight and
// MaxInFlight, then lets them go.
func TestDependencyInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 7
		dep := NewDependency(0, Hang())
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { _, _ = dep.Call(ctx) })
		}
		synctest.Wait()
		if diff := cmp.Diff(Counts{Calls: n, InFlight: n, MaxInFlight: n}, dep.Counts()); diff != "" {
			t.Errorf("while hanging, Counts mismatch (-want +got):\n%s", diff)
		}
		cancel()
		wg.Wait()
		if diff := cmp.Diff(Counts{Calls: n, Failures: n, MaxInFlight: n}, dep.Counts()); diff != "" {
			t.Errorf("after, Counts mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestDependencyConcurrent checks the counters under -race from many
// goroutines at once.
func TestDependencyConcurrent(t *testing.T) {
	dep := NewDependency(0, FailRate(0.5, 1))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				_, _ = dep.Call(context.Background())
			}
		})
	}
	wg.Wait()
	c := dep.Counts()
	if c.Calls != 4000 || c.Successes+c.Failures != 4000 || c.InFlight != 0 || c.MaxInFlight < 1 || c.MaxInFlight > 8 {
		t.Errorf("Counts = %+v, want 4000 calls, all finished, at most 8 at once", c)
	}
}

func TestDependencyHangTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := NewDependency(0, Hang())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := dep.Call(ctx); err != context.DeadlineExceeded {
			t.Errorf("Call = %v, want context.DeadlineExceeded", err)
		}
	})
}

package sim

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// runProbe runs one client making one call through a layer that runs
// probe with the run's clock, then goes on to the server (Base 10ms).
func runProbe(t *testing.T, probe func(clk clock.Clock, ctx context.Context)) *Result {
	t.Helper()
	return Run(Scenario{Duration: time.Hour, Clients: []Clients{{N: 1, Calls: 1}}}, PolicySet[int]{Name: "probe",
		Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("probe", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				probe(clk, ctx)
				return next.Call(ctx)
			})
		}})
}

// wantPanic runs f and checks that it panics with a value whose text
// contains want.
func wantPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		var msg string
		switch v := r.(type) {
		case string:
			msg = v
		case error:
			msg = v.Error()
		}
		if !strings.Contains(msg, want) {
			t.Errorf("panic = %v, want one containing %q", r, want)
		}
	}()
	f()
}

// bubble runs f in a synctest bubble, where a run's wall-clock waits
// (the watchdog's, the scheduler's polls, a pipeline's time.Sleep) take
// the bubble's time. The bubble's time passes only while all its
// goroutines wait: a scheduler that polled without sleeping would hold it
// for good. 2s of the test's own wall-clock time bound the bubble, for
// failure only.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	testwait.BubbleWithin(t, 2*time.Second, "the run in a bubble", f)
}

func TestClockSleep(t *testing.T) {
	defer goleak.VerifyNone(t)
	type step struct {
		Since time.Duration
		Err   error
	}
	var got []step
	var start time.Time
	r := runProbe(t, func(clk clock.Clock, ctx context.Context) {
		start = clk.Now()
		for _, d := range []time.Duration{3 * time.Second, 0, -time.Second, time.Millisecond} {
			err := clk.Sleep(ctx, d)
			got = append(got, step{clk.Now().Sub(start), err})
		}
	})
	want := []step{{3 * time.Second, nil}, {3 * time.Second, nil}, {3 * time.Second, nil}, {3*time.Second + time.Millisecond, nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sleeps mismatch (-want +got):\n%s", diff)
	}
	if !start.Equal(clock.NewFake().Now()) {
		t.Errorf("virtual time starts at %v, want clock.Fake's epoch %v", start, clock.NewFake().Now())
	}
	if want := 3*time.Second + time.Millisecond + 10*time.Millisecond; r.Finished != want {
		t.Errorf("Finished = %v, want %v (the sleeps and the server's 10ms)", r.Finished, want)
	}
}

// TestClockAfterFunc checks that callbacks run in virtual time order, ties
// in the order they were armed, and that Stop and Reset work.
func TestClockAfterFunc(t *testing.T) {
	type fired struct {
		Name string
		At   time.Duration
	}
	var got []fired
	var stops []bool
	runProbe(t, func(clk clock.Clock, ctx context.Context) {
		start := clk.Now()
		at := func(name string) func() { return func() { got = append(got, fired{name, clk.Now().Sub(start)}) } }
		clk.AfterFunc(2*time.Second, at("b"))
		clk.AfterFunc(time.Second, at("a1"))
		clk.AfterFunc(time.Second, at("a2"))
		stopped := clk.AfterFunc(time.Second, at("stopped"))
		reset := clk.AfterFunc(time.Second, at("reset"))
		now := clk.AfterFunc(0, at("now"))
		stops = append(stops, stopped.Stop(), stopped.Stop(), reset.Reset(3*time.Second))
		if c := now.C(); c != nil {
			t.Errorf("AfterFunc timer's C() = %v, want nil", c)
		}
		_ = clk.Sleep(ctx, 5*time.Second)
		stops = append(stops, reset.Stop(), reset.Reset(time.Second))
		_ = clk.Sleep(ctx, 2*time.Second)
	})
	want := []fired{{"now", 0}, {"a1", time.Second}, {"a2", time.Second}, {"b", 2 * time.Second}, {"reset", 3 * time.Second}, {"reset", 6 * time.Second}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("callbacks mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, false, true, false, false}, stops); diff != "" {
		t.Errorf("Stop and Reset results mismatch (-want +got):\n%s", diff)
	}
}

// TestTimeoutWakesSleeper checks that a call asleep on a timeout's context
// wakes when the timeout's AfterFunc fires, at that virtual time.
func TestTimeoutWakesSleeper(t *testing.T) {
	var err error
	var slept time.Duration
	Run(Scenario{Duration: time.Hour, Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
		clk := env.Clock()
		return resilience.Then(timeout.New[int](time.Second, timeout.WithClock(clk)),
			resilience.New("sleep", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				start := clk.Now()
				err = clk.Sleep(ctx, time.Hour)
				slept = clk.Now().Sub(start)
				return 0, err
			}))
	}})
	if err != context.DeadlineExceeded || slept != time.Second {
		t.Errorf("Sleep = %v after %v, want context.DeadlineExceeded after 1s", err, slept)
	}
}

// TestNewTimer checks that a timer's channel gets the virtual time when it
// fires, and that Stop and Reset work as the clock package says.
func TestNewTimer(t *testing.T) {
	defer goleak.VerifyNone(t)
	var fired, stopped time.Duration
	var stopReport, resetReport bool
	runProbe(t, func(clk clock.Clock, ctx context.Context) {
		start := clk.Now()
		tm := clk.NewTimer(time.Second)
		at := <-tm.C()
		fired = at.Sub(start)
		tm.Reset(2 * time.Second)
		stopReport = tm.Stop()
		resetReport = tm.Reset(500 * time.Millisecond)
		<-tm.C()
		stopped = clk.Now().Sub(start)
	})
	if fired != time.Second || stopped != 1500*time.Millisecond || !stopReport || resetReport {
		t.Errorf("fired after %v, Stop %v, Reset %v, second fire at %v: want 1s, true, false, 1.5s", fired, stopReport, resetReport, stopped)
	}
}

func TestSleepOutsideCallPanics(t *testing.T) {
	wantPanic(t, "sim: Sleep called outside a simulated call", func() {
		runProbe(t, func(clk clock.Clock, ctx context.Context) {
			clk.AfterFunc(time.Second, func() { _ = clk.Sleep(context.Background(), time.Second) })
			_ = clk.Sleep(ctx, 2*time.Second)
		})
	})
}

func TestAfterFuncNilPanics(t *testing.T) {
	wantPanic(t, "sim: AfterFunc with nil func", func() {
		runProbe(t, func(clk clock.Clock, ctx context.Context) { clk.AfterFunc(time.Second, nil) })
	})
}

// TestCallPanicPropagates checks that a panic in a simulated call comes out
// of Run, after the other calls were unwound.
func TestCallPanicPropagates(t *testing.T) {
	defer goleak.VerifyNone(t)
	calls := 0
	wantPanic(t, "boom", func() {
		Run(Scenario{Duration: time.Minute, Clients: []Clients{{N: 5, Think: time.Second}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			return resilience.New("bomb", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if calls++; calls == 7 {
					panic("boom")
				}
				return next.Call(ctx)
			})
		}})
	})
}

// TestStuckCall runs in a synctest bubble, where the simulator's
// wall-clock watchdog fires as soon as everything is blocked.
func TestStuckCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		wantPanic(t, "on something other than the simulator's clock", func() {
			Run(Scenario{Duration: time.Minute, Clients: []Clients{{Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
				return resilience.New("stuck", func(ctx context.Context, next resilience.Next[int]) (int, error) {
					<-release // a channel the simulator knows nothing of
					return 0, nil
				})
			}})
		})
		close(release)
		synctest.Wait()
	})
}

// TestEndCutsShort checks that calls in progress at the end of the run
// are cut short, not counted, and leave no goroutine behind.
func TestEndCutsShort(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := Run(Scenario{Duration: 10 * time.Second, Server: Server{Outages: []Outage{{Start: 5 * time.Second, End: time.Hour, Mode: Hang}}},
		Clients: []Clients{{N: 10, Think: 100 * time.Millisecond}}}, PolicySet[int]{Build: func(*Env) resilience.Policy[int] { return resilience.Policy[int]{} }})
	if r.Failures != 0 || r.Successes == 0 || r.Finished >= 5*time.Second+10*time.Millisecond {
		t.Errorf("%+v, finished %v: want successes until 5s, and the calls hanging from then on not counted", r.Totals, r.Finished)
	}
}

func TestSimClockIsAClock(t *testing.T) {
	var _ clock.Clock = (&Env{w: newWorld()}).Clock()
}

// TestAdoptsGoroutines runs a layer that calls the server from two
// goroutines of its own, after 10ms and 20ms, and waits for both on a
// channel, as a hedge does: the goroutines run on the clock like the
// simulated calls, and the call ends when the later one is done.
func TestAdoptsGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := Run(Scenario{Duration: time.Minute, Server: Server{Base: 10 * time.Millisecond}, Clients: []Clients{{Calls: 3}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("fork", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				errs := make(chan error, 2)
				for _, d := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond} {
					go func() {
						if err := clk.Sleep(ctx, d); err != nil {
							errs <- err
							return
						}
						_, err := next.Call(ctx)
						errs <- err
					}()
				}
				return 0, errors.Join(<-errs, <-errs)
			})
		}})
	want := []time.Duration{30 * time.Millisecond, 30 * time.Millisecond, 30 * time.Millisecond}
	if diff := cmp.Diff(want, r.Latencies); diff != "" || r.ServerCalls != 6 || r.Successes != 3 {
		t.Errorf("%+v, latencies mismatch (-want +got):\n%s", r.Totals, diff)
	}
}

// TestCallWaitsOnAnother runs two calls, the first of which waits on a
// channel that the second closes, half a second after it starts at 1 s:
// the first call goes on at 1.5 s.
func TestCallWaitsOnAnother(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := Run(Scenario{Duration: time.Minute, Server: Server{Base: 10 * time.Millisecond},
		Clients: []Clients{{Calls: 1}, {Start: time.Second, Calls: 1}}},
		PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			gate := make(chan struct{})
			var n atomic.Int32 // a call that waits on a channel hands no baton back: state shared across calls needs a lock
			return resilience.New("gate", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n.Add(1) == 1 {
					<-gate
				} else {
					if err := clk.Sleep(ctx, 500*time.Millisecond); err != nil {
						return 0, err
					}
					close(gate)
				}
				return next.Call(ctx)
			})
		}})
	// The second call ends first, at 1.51 s; the first at 1.51 s too, after it.
	want := []time.Duration{510 * time.Millisecond, 1510 * time.Millisecond}
	if diff := cmp.Diff(want, r.Latencies); diff != "" || r.Successes != 2 {
		t.Errorf("%+v, latencies mismatch (-want +got):\n%s", r.Totals, diff)
	}
}

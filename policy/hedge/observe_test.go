package hedge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/telemetry"
)

func launched(attempt int, elapsed time.Duration) telemetry.Event {
	return telemetry.Event{Type: hedge.EventLaunched, Name: "quotes", Attempt: attempt, Elapsed: elapsed}
}

func won(attempt int, elapsed time.Duration) telemetry.Event {
	return telemetry.Event{Type: hedge.EventWon, Name: "quotes", Attempt: attempt, Elapsed: elapsed}
}

func cancelled(n int) telemetry.Event {
	return telemetry.Event{Type: hedge.EventLosersCancelled, Name: "quotes", Attempt: n}
}

func TestObserverEvents(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []hedge.Option
		steps []step
		want  []telemetry.Event
	}{
		{"no hedge: nothing", nil, []step{{d: 10 * ms}}, nil},
		{"the first attempt fails before the delay: nothing to race", []hedge.Option{hedge.WithMaxHedges(1)},
			[]step{{d: 10 * ms, err: errA}, {d: 10 * ms, err: errB}},
			[]telemetry.Event{launched(2, 10*ms)}},
		{"the hedge wins", nil, []step{{d: time.Second, v: 1}, {d: 100 * ms, v: 2}},
			[]telemetry.Event{launched(2, 50*ms), won(2, 150*ms), cancelled(1)}},
		{"the first wins over two hedges", []hedge.Option{hedge.WithMaxHedges(2)},
			[]step{{d: 120 * ms, v: 1}, {d: time.Second, v: 2}, {d: time.Second, v: 3}},
			[]telemetry.Event{launched(2, 50*ms), launched(3, 100*ms), won(1, 120*ms), cancelled(2)}},
		{"a failure starts the hedge at once; it wins alone", nil, []step{{d: 10 * ms, err: errA}, {d: 20 * ms, v: 2}},
			[]telemetry.Event{launched(2, 10*ms), won(2, 30*ms)}},
		{"all fail: no winner", nil, []step{{d: 60 * ms, err: errA}, {d: 20 * ms, err: errB}},
			[]telemetry.Event{launched(2, 50*ms)}},
		{"a hint defers the hedge: launched when it starts", nil,
			[]step{{d: 10 * ms, err: pushback{30 * ms}}, {d: 20 * ms, v: 2}},
			[]telemetry.Event{launched(2, 40*ms), won(2, 60*ms)}},
		{"a spent budget starts no hedge: nothing launched", []hedge.Option{hedge.WithMaxHedges(2), hedge.WithBudget(0.1)},
			[]step{{d: 10 * ms, err: errA}, {d: 10 * ms, err: errB}, {v: 3}},
			[]telemetry.Event{launched(2, 10*ms)}},
		{"a refusal starts no hedge", []hedge.Option{hedge.WithMaxHedges(2)},
			[]step{{d: 80 * ms, v: 1}, {d: 10 * ms, err: refused(-1)}},
			[]telemetry.Event{launched(2, 50*ms), won(1, 80*ms)}},
	} {
		bubbleWithin(t, func(t *testing.T) {
			r := new(eventlog.Recorder)
			opts := append([]hedge.Option{hedge.WithName("quotes"), hedge.WithObserver(r)}, tc.opts...)
			_, _ = hedge.New[int](50*ms, opts...).Do(context.Background(), newLog(tc.steps...).op)
			if diff := cmp.Diff(tc.want, r.Take()); diff != "" {
				t.Errorf("%s: events mismatch (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// The layer name stays the delay's, as a timeout's does; the name is in
// the events.
func TestWithNameKeepsTheLayerName(t *testing.T) {
	for want, p := range map[string]resilience.Policy[int]{
		"hedge(50ms)": hedge.New[int](50*ms, hedge.WithName("quotes")),
		"hedge(p95)":  hedge.New[int](50*ms, hedge.WithName("quotes"), hedge.WithQuantile(0.95)),
	} {
		if got := p.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// WithConfig merges Name and Observer like the other fields: set ones
// replace, zero ones keep what came before.
func TestWithConfigSetsNameAndObserver(t *testing.T) {
	steps := []step{{d: time.Second, v: 1}, {d: 100 * ms, v: 2}}
	for _, tc := range []struct {
		name string
		opts func(r *eventlog.Recorder) []hedge.Option
		want []telemetry.Event
	}{
		{"from Config", func(r *eventlog.Recorder) []hedge.Option {
			return []hedge.Option{hedge.WithConfig(hedge.Config[int]{Name: "quotes", Observer: r})}
		}, []telemetry.Event{launched(2, 50*ms), won(2, 150*ms), cancelled(1)}},
		{"Config{} keeps earlier options", func(r *eventlog.Recorder) []hedge.Option {
			return []hedge.Option{hedge.WithName("quotes"), hedge.WithObserver(r), hedge.WithConfig(hedge.Config[int]{MaxHedges: 1})}
		}, []telemetry.Event{launched(2, 50*ms), won(2, 150*ms), cancelled(1)}},
		{"a later option overrides Config", func(r *eventlog.Recorder) []hedge.Option {
			return []hedge.Option{hedge.WithConfig(hedge.Config[int]{Name: "quotes", Observer: r}), hedge.WithObserver(nil)}
		}, nil},
	} {
		bubbleWithin(t, func(t *testing.T) {
			r := new(eventlog.Recorder)
			_, _ = hedge.New[int](50*ms, tc.opts(r)...).Do(context.Background(), newLog(steps...).op)
			if diff := cmp.Diff(tc.want, r.Take()); diff != "" {
				t.Errorf("%s: events mismatch (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// An observer held up in hedge.launched, on the timer's goroutine, holds
// back the events decided after it and the call's return: events come in
// order, before Do returns. (Not in a synctest bubble: the attempts wait
// for the observer on a mutex, which is not durably blocking.)
func TestObserverSlowObserverKeepsOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error // the hedge's
		want []telemetry.Event
	}{
		{"the hedge wins while launched is held", nil, []telemetry.Event{launched(2, 50*ms), won(2, 50*ms), cancelled(1)}},
		{"all fail while launched is held", errB, []telemetry.Event{launched(2, 50*ms)}},
	} {
		clk := clock.NewFake()
		entered, release := make(chan struct{}), make(chan struct{})
		r := new(eventlog.Recorder)
		obs := telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type == hedge.EventLaunched {
				close(entered)
				select {
				case <-release:
				case <-time.After(testwait.Patience):
					t.Errorf("%s: the observer was not released", tc.name)
				}
			}
			r.Observe(e)
		})
		hedged, failFirst := make(chan struct{}), make(chan struct{})
		n := 0
		var mu sync.Mutex
		attempt := func(ctx context.Context) (int, error) {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			if i == 1 { // the first attempt fails when told, or is cancelled
				select {
				case <-failFirst:
					close(release) // the observer goes on as the call ends
					return 0, errA
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			defer close(hedged)
			return 2, tc.err
		}
		p := hedge.New[int](50*ms, hedge.WithName("quotes"), hedge.WithObserver(obs), hedge.WithClock(clk))
		done := make(chan []telemetry.Event, 1)
		go func() {
			_, _ = p.Do(context.Background(), attempt)
			done <- r.Take() // as Do returns
		}()
		testwait.BlockUntil(t, clk, 1)
		go clk.Advance(50 * ms) // fires the timer, which blocks in the observer
		testwait.Recv(t, entered, "hedge.launched")
		testwait.Recv(t, hedged, "the hedge to return")
		if tc.err != nil {
			close(failFirst)
		} else {
			close(release)
		}
		if diff := cmp.Diff(tc.want, testwait.RecvFor(t, done, bound, "Do to return, its loser cancelled")); diff != "" {
			t.Errorf("%s: events when Do returned mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

// An observer's panic on another goroutine (the timer's) reaches the
// caller's, once every attempt has returned.
func TestObserverPanicReachesTheCaller(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		obs := telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type == hedge.EventLaunched {
				panic("observer broke")
			}
		})
		l := newLog(step{d: time.Second, v: 1}, step{d: 10 * ms, v: 2})
		got := func() (r any) {
			defer func() { r = recover() }()
			_, _ = hedge.New[int](50*ms, hedge.WithObserver(obs)).Do(context.Background(), l.op)
			return nil
		}()
		if got != "observer broke" {
			t.Errorf("Do panicked with %v, want the observer's panic", got)
		}
		if l.running != 0 {
			t.Errorf("%d attempts still running after Do panicked", l.running)
		}
	})
}

// An observer adds no allocation of the policy's, to a call that hedges
// or to one that does not.
func TestObserverAddsNoAllocation(t *testing.T) {
	ctx := context.Background()
	fast := func(context.Context) (int, error) { return 1, nil }
	n := 0
	failFirst := func(context.Context) (int, error) { // a failure starts the hedge at once: no wall clock
		if n++; n%2 == 1 {
			return 0, errA
		}
		return 2, nil
	}
	var c telemetry.Counter
	for _, tc := range []struct {
		name string
		op   func(context.Context) (int, error)
	}{{"no hedge", fast}, {"a hedge", failFirst}} {
		without := hedge.New[int](time.Hour)
		with := hedge.New[int](time.Hour, hedge.WithObserver(&c))
		base := testing.AllocsPerRun(200, func() { _, _ = without.Do(ctx, tc.op) })
		got := testing.AllocsPerRun(200, func() { _, _ = with.Do(ctx, tc.op) })
		// The race detector makes sync.Pool drop kept values at random,
		// so the two counts are compared only without it.
		if got != base && !raceEnabled {
			t.Errorf("%s: %v allocs per call with an observer, %v without", tc.name, got, base)
		}
	}
	if got, want := c.Count("", hedge.EventWon), uint64(201); got != want {
		t.Errorf("counted %d hedge.won, want %d (one per hedged call)", got, want)
	}
}

func BenchmarkHedgeObserved(b *testing.B) {
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	p := hedge.New[int](time.Second, hedge.WithObserver(new(telemetry.Counter)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, op)
	}
}

// Of several panics of the observer in one call (hedge.launched on the
// timer's goroutine, then hedge.won on the hedge's), the first reaches the
// caller.
func TestObserverFirstPanicReachesTheCaller(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		obs := telemetry.ObserverFunc(func(e telemetry.Event) { panic(e.Type) })
		l := newLog(step{d: time.Second, v: 1}, step{d: 10 * ms, v: 2})
		got := func() (r any) {
			defer func() { r = recover() }()
			_, _ = hedge.New[int](50*ms, hedge.WithObserver(obs)).Do(context.Background(), l.op)
			return nil
		}()
		if got != hedge.EventLaunched {
			t.Errorf("Do panicked with %v, want the observer's first panic, %v", got, hedge.EventLaunched)
		}
	})
}

// A first attempt's panic reaches the caller only once every event decided
// before it has been reported: an observer held up in hedge.launched, on
// the timer's goroutine, holds back the panic. (Not in a synctest bubble:
// the caller waits for the observer on a mutex.)
func TestObserverHeldUpHoldsBackAPanic(t *testing.T) {
	clk := clock.NewFake()
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	entered, release := make(chan struct{}), make(chan struct{})
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		if e.Type == hedge.EventLaunched {
			close(entered)
			<-release
			note("launched")
		}
	})
	panicNow, hedged := make(chan struct{}), make(chan struct{})
	n := 0
	attempt := func(ctx context.Context) (int, error) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		if i == 1 {
			<-panicNow
			panic("attempt broke")
		}
		defer close(hedged)
		return 2, errB
	}
	p := hedge.New[int](50*ms, hedge.WithName("quotes"), hedge.WithObserver(obs), hedge.WithClock(clk))
	done := make(chan any, 1)
	go func() {
		defer func() { note("panic"); done <- recover() }()
		_, _ = p.Do(context.Background(), attempt)
	}()
	testwait.BlockUntil(t, clk, 1)
	go clk.Advance(50 * ms) // fires the timer, which blocks in the observer
	testwait.Recv(t, entered, "hedge.launched")
	testwait.Recv(t, hedged, "the hedge to return")
	close(panicNow)
	// Let Do's panic surface if it does not wait for the observer; a
	// panic that waits is held back whatever this wait is.
	select {
	case <-done:
		close(release)
		t.Fatal("Do panicked while the observer was still reporting hedge.launched")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := testwait.RecvFor(t, done, bound, "Do's panic"); got != "attempt broke" {
		t.Errorf("Do panicked with %v, want the attempt's panic", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"launched", "panic"}, order); diff != "" {
		t.Errorf("order of the observer's report and Do's panic: mismatch (-want +got):\n%s", diff)
	}
}

package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// waiting is a caller blocked in Acquire, in a bubble.
type waiting struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	permit adaptive.Permit
	err    error
}

// queueUp starts a caller of priority p named name and waits until it is
// blocked (queued) or has returned.
func queueUp(lim *adaptive.Limiter, name string, p adaptive.Priority) *waiting {
	ctx, cancel := context.WithCancel(adaptive.ContextWithPriority(context.Background(), p))
	w := &waiting{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.permit, w.err = lim.Acquire(ctx)
	}()
	synctest.Wait()
	return w
}

// state is "queued", "admitted" or the error of w, once every goroutine
// of the bubble is blocked.
func (w *waiting) state() string {
	synctest.Wait()
	select {
	case <-w.done:
		if w.err != nil {
			return w.err.Error()
		}
		return "admitted"
	default:
		return "queued"
	}
}

func states(ws ...*waiting) map[string]string {
	m := map[string]string{}
	for _, w := range ws {
		m[w.name] = w.state()
	}
	return m
}

// bubble runs f in a synctest bubble; the bubble ends its waiting callers
// when f returns, by cancelling them.
func bubble(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, f)
}

func TestQueueServesPrioritiesThenArrival(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(8))
		first := hold(t, lim, 1)[0]
		l1 := queueUp(lim, "low 1", adaptive.Low)
		n1 := queueUp(lim, "normal 1", adaptive.Normal)
		l2 := queueUp(lim, "low 2", adaptive.Low)
		c1 := queueUp(lim, "critical 1", adaptive.Critical)
		n2 := queueUp(lim, "normal 2", adaptive.Normal)
		all := []*waiting{l1, n1, l2, c1, n2}
		if got := lim.Stats().Queued; got != 5 {
			t.Fatalf("Queued %d, want 5", got)
		}
		order := []*waiting{c1, n1, n2, l1, l2}
		end := &first
		for i, next := range order {
			(*end).Done(nil)
			want := map[string]string{}
			for _, w := range all {
				want[w.name] = "queued"
			}
			for _, w := range order[:i+1] {
				want[w.name] = "admitted"
			}
			want[next.name] = "admitted"
			if diff := cmp.Diff(want, states(all...)); diff != "" {
				t.Fatalf("after %d releases (mismatch -want +got):\n%s", i+1, diff)
			}
			p := &next.permit
			end = &p
		}
		(*end).Done(nil)
		if diff := cmp.Diff(adaptive.Stats{Limit: 1}, lim.Stats()); diff != "" {
			t.Errorf("all done: Stats mismatch (-want +got):\n%s", diff)
		}
	})
}

// A full queue takes a caller of higher priority by refusing the newest
// caller of the lowest priority below it; a caller finds no place among
// callers of its own priority or higher.
func TestFullQueueShedsLowestPriorityFirst(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(3), adaptive.WithName("api"))
		hold(t, lim, 1)
		l1 := queueUp(lim, "low 1", adaptive.Low)
		n1 := queueUp(lim, "normal 1", adaptive.Normal)
		l2 := queueUp(lim, "low 2", adaptive.Low)
		c1 := queueUp(lim, "critical 1", adaptive.Critical) // takes low 2's place
		n2 := queueUp(lim, "normal 2", adaptive.Normal)     // takes low 1's place
		n3 := queueUp(lim, "normal 3", adaptive.Normal)     // none below it: refused
		l3 := queueUp(lim, "low 3", adaptive.Low)
		want := map[string]string{
			"low 1": "adaptive: full (api)", "low 2": "adaptive: full (api)", "normal 3": "adaptive: full (api)", "low 3": "adaptive: full (api)",
			"normal 1": "queued", "critical 1": "queued", "normal 2": "queued",
		}
		if diff := cmp.Diff(want, states(l1, n1, l2, c1, n2, n3, l3)); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		if s := lim.Stats(); s.Queued != 3 || s.Refused != 4 {
			t.Fatalf("Stats %+v, want 3 queued and 4 rejected", s)
		}
		if !errors.Is(l1.err, adaptive.ErrFull) {
			t.Errorf("an evicted caller's error %v does not match ErrFull", l1.err)
		}
		for _, w := range []*waiting{n1, c1, n2} {
			w.cancel()
		}
	})
}

func TestMaxWaitInTheQueue(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(2),
			adaptive.WithMaxWait(100*time.Millisecond), adaptive.WithName("api"))
		hold(t, lim, 1)
		w := queueUp(lim, "w", adaptive.Normal)
		time.Sleep(99 * time.Millisecond)
		if got := w.state(); got != "queued" {
			t.Fatalf("after 99ms of a MaxWait of 100ms: %s, want queued", got)
		}
		time.Sleep(time.Millisecond)
		if got := w.state(); got != "adaptive: full, MaxWait spent in the queue (api)" {
			t.Fatalf("after MaxWait: %q, want the queue timeout", got)
		}
		if !errors.Is(w.err, adaptive.ErrQueueTimeout) || !errors.Is(w.err, adaptive.ErrFull) {
			t.Errorf("the queue timeout %v does not match ErrQueueTimeout and ErrFull", w.err)
		}
		if s := lim.Stats(); s.Queued != 0 || s.Refused != 1 {
			t.Errorf("Stats %+v, want none queued and 1 rejected", s)
		}
	})
}

// A caller whose ctx ends while it waits leaves at once with ctx.Err(),
// and whoever it held back is admitted when a slot allows.
func TestCancelledCallerLeavesTheQueue(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(4), adaptive.WithMinLimit(4), adaptive.WithMaxLimit(4), adaptive.WithMaxQueue(4), adaptive.WithReserve(0.5))
		held := hold(t, lim, 2) // Normal's ceiling is 2 of 4: a Normal caller queues
		n := queueUp(lim, "normal", adaptive.Normal)
		l := queueUp(lim, "low", adaptive.Low) // held back by the queued normal caller as well
		c := queueUp(lim, "critical", adaptive.Critical)
		if diff := cmp.Diff(map[string]string{"normal": "queued", "low": "queued", "critical": "admitted"}, states(n, l, c)); diff != "" {
			t.Fatalf("a critical caller is admitted past the queued ones while the limit has room (-want +got):\n%s", diff)
		}
		held[0].Done(nil) // 2 in flight, Low's ceiling is 1: nobody fits
		held[1].Done(nil) // 1 in flight: the normal caller fits
		if diff := cmp.Diff(map[string]string{"normal": "admitted", "low": "queued"}, states(n, l)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		c.permit.Done(nil)
		n.permit.Done(nil) // none in flight: low is admitted
		if got := l.state(); got != "admitted" {
			t.Fatalf("low caller: %s, want admitted", got)
		}
		l.permit.Done(nil)

		held = hold(t, lim, 2)
		n = queueUp(lim, "normal", adaptive.Normal)
		l = queueUp(lim, "low", adaptive.Low)
		held[0].Done(nil) // 1 in flight: the normal caller is admitted
		if got := n.state(); got != "admitted" {
			t.Fatalf("normal caller: %s, want admitted", got)
		}
		n.permit.Done(nil)
		m := queueUp(lim, "normal 2", adaptive.Normal) // 1 in flight: admitted
		if got := m.state(); got != "admitted" {
			t.Fatalf("normal 2: %s, want admitted", got)
		}
		o := queueUp(lim, "normal 3", adaptive.Normal) // 2 in flight: queued, ahead of low
		o.cancel()
		if got := o.state(); got != "context canceled" {
			t.Fatalf("cancelled caller: %q, want context canceled", got)
		}
		held[1].Done(nil)
		if got := l.state(); got != "queued" {
			t.Fatalf("low caller with 1 in flight (its ceiling is 1): %s, want queued", got)
		}
		m.permit.Done(nil)
		if got := l.state(); got != "admitted" {
			t.Fatalf("low caller with none in flight: %s, want admitted", got)
		}
		l.permit.Done(nil)
		if diff := cmp.Diff(adaptive.Stats{Limit: 4}, lim.Stats()); diff != "" {
			t.Errorf("all done: Stats mismatch (-want +got):\n%s", diff)
		}
	})
}

// A limit that grows admits queued callers at once.
func TestGrowingLimitAdmitsQueuedCallers(t *testing.T) {
	bubble(t, func(t *testing.T) {
		grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 3 }}
		lim := adaptive.New(adaptive.WithAlgorithm(grow), adaptive.WithInitial(2), adaptive.WithMaxQueue(8), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
		held := hold(t, lim, 2)
		var ws []*waiting
		for _, name := range []string{"a", "b", "c", "d"} {
			ws = append(ws, queueUp(lim, name, adaptive.Normal))
		}
		time.Sleep(time.Second)
		held[0].Done(nil) // ends the window: the limit goes to 5
		want := map[string]string{"a": "admitted", "b": "admitted", "c": "admitted", "d": "admitted"}
		if diff := cmp.Diff(want, states(ws...)); diff != "" {
			t.Fatalf("after the limit grew from 2 to 5 with 1 in flight (-want +got):\n%s", diff)
		}
		if s := lim.Stats(); s.Limit != 5 || s.InFlight != 5 || s.Queued != 0 {
			t.Fatalf("Stats %+v, want limit 5, 5 in flight, none queued", s)
		}
	})
}

// A caller admitted from the queue as its ctx ends gives the slot on.
func TestAdmittedAsContextEndsGivesTheSlotOn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(2))
		first := hold(t, lim, 1)[0]
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			p, err := lim.Acquire(ctx)
			if err == nil {
				p.Done(nil)
			}
			got <- err
		}()
		synctest.Wait()
		next := queueUp(lim, "next", adaptive.Normal)
		// Cancel and release with nothing running in between: the first
		// waiter may see either; whichever it sees, the slot reaches next.
		cancel()
		first.Done(nil)
		if err := <-got; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("first waiter: %v", err)
		}
		if s := next.state(); s != "admitted" {
			t.Fatalf("next waiter: %s, want admitted", s)
		}
		next.permit.Done(nil)
		if diff := cmp.Diff(adaptive.Stats{Limit: 1}, lim.Stats()); diff != "" {
			t.Errorf("Stats mismatch (-want +got):\n%s", diff)
		}
	})
}

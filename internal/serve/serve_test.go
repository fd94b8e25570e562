package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/google/go-cmp/cmp"
)

// Every test runs in a testing/synctest bubble: a Finish that waits for a
// handler that never returns, or never wakes it, blocks on a channel of the
// bubble, which synctest reports at once as a deadlock instead of hanging.

// steps records what a sequence of calls on a Once returned.
type steps struct {
	Enter1, Enter2, EnterAfterExit, Finish1, Finish2, EnterAfterFinish bool
}

func TestOnceRunsTheHandlerOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var got steps
		got.Enter1 = o.Enter()
		got.Enter2 = o.Enter()
		o.Exit()
		got.EnterAfterExit = o.Enter()
		got.Finish1 = o.Finish()
		got.Finish2 = o.Finish()
		got.EnterAfterFinish = o.Enter()
		want := steps{Enter1: true, Finish1: true, Finish2: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("calls mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestFinishBeforeEnterClosesTheOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		got := []bool{o.Finish(), o.Enter(), o.Finish()}
		if diff := cmp.Diff([]bool{false, false, false}, got); diff != "" {
			t.Errorf("Finish, Enter, Finish mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestSimultaneousEntersRunTheHandlerOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Several ops (a hedge's attempts) race to Enter, and the server's
		// Finish races with them: exactly one op runs the handler, or none if
		// Finish came first, and Finish says which.
		for range 200 {
			var o Once
			var winners atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 4 {
				wg.Go(func() {
					<-start
					if o.Enter() {
						winners.Add(1)
						o.Exit()
					}
				})
			}
			close(start)
			finished := make(chan bool, 1)
			go func() {
				ran := o.Finish()
				wg.Wait()
				finished <- ran
			}()
			ran := testwait.Recv(t, finished, "Finish and the ops")
			want := int32(0)
			if ran {
				want = 1
			}
			if n := winners.Load(); n != want {
				t.Fatalf("%d ops ran the handler and Finish reported %v; want %d", n, ran, want)
			}
			if o.Enter() {
				t.Fatal("Enter after Finish let the op run the handler")
			}
		}
	})
}

func TestFinishWaitsForARunningHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		if !o.Enter() {
			t.Fatal("the first Enter refused")
		}
		finished := make(chan bool)
		go func() { finished <- o.Finish() }()
		synctest.Wait()
		select {
		case <-finished:
			t.Fatal("Finish returned while the handler runs")
		default:
		}
		answer := "late" // written by the handler, read by the server after Finish
		var got string
		go func() {
			defer o.Exit()
			got = answer
		}()
		if !<-finished {
			t.Error("Finish reported the handler not called")
		}
		if got != answer {
			t.Errorf("after Finish the server sees %q, want the handler's %q", got, answer)
		}
	})
}

// handler is an op that runs a handler through o, as the server sides do.
func handler(o *Once, calls *atomic.Int32, body func()) resilience.Op[struct{}] {
	return func(ctx context.Context) (struct{}, error) {
		if !o.Enter() {
			return struct{}{}, errAgain
		}
		defer o.Exit()
		calls.Add(1)
		body()
		return struct{}{}, nil
	}
}

var errAgain = errors.New("called again")

func TestDoReportsAPolicyThatSkipsTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var calls atomic.Int32
		skip := resilience.New("skip", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			return struct{}{}, nil
		})
		ran, err := o.Do(context.Background(), skip, handler(&o, &calls, func() {}))
		if ran || err != nil || calls.Load() != 0 {
			t.Errorf("Do = %v, %v with %d handler calls; want false, nil, 0", ran, err, calls.Load())
		}
	})
}

func TestDoRefusesASecondCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var calls atomic.Int32
		var second error
		twice := resilience.New("twice", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			r, err := next.Call(ctx)
			_, second = next.Call(ctx)
			return r, err
		})
		ran, err := o.Do(context.Background(), twice, handler(&o, &calls, func() {}))
		if !ran || err != nil || calls.Load() != 1 || second != errAgain {
			t.Errorf("Do = %v, %v, second call %v, %d handler calls; want true, nil, %v, 1", ran, err, second, calls.Load(), errAgain)
		}
	})
}

func TestDoRefusesAnOpCalledAfterItReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var calls atomic.Int32
		start, late := make(chan struct{}), make(chan error, 1)
		refused := errors.New("refused")
		abandon := resilience.New("abandon", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go func() {
				<-start
				_, err := next.Call(ctx)
				late <- err
			}()
			return struct{}{}, refused
		})
		ran, err := o.Do(context.Background(), abandon, handler(&o, &calls, func() {}))
		if ran || err != refused {
			t.Errorf("Do = %v, %v; want false, %v", ran, err, refused)
		}
		close(start)
		if err := <-late; err != errAgain || calls.Load() != 0 {
			t.Errorf("the late op returned %v and ran the handler %d times; want %v, never", err, calls.Load(), errAgain)
		}
	})
}

func TestDoWaitsForAnAbandonedHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var calls atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		abandon := resilience.New("abandon", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go next.Call(ctx)
			<-started
			return struct{}{}, errors.New("expired")
		})
		type result struct {
			ran bool
			err string
		}
		done := make(chan result)
		go func() {
			ran, err := o.Do(context.Background(), abandon, handler(&o, &calls, func() {
				close(started)
				<-release
			}))
			done <- result{ran, err.Error()}
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Do returned while the handler runs")
		default:
		}
		close(release)
		if got := <-done; got != (result{true, "expired"}) {
			t.Errorf("Do = %+v, want the handler called and the policy's error", got)
		}
	})
}

func TestDoWaitsForTheHandlerWhenThePolicyPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o Once
		var calls atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		var handlerDone atomic.Bool
		crash := resilience.New("crash", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go next.Call(ctx)
			<-started
			panic("policy bug")
		})
		done := make(chan any)
		go func() {
			defer func() { done <- recover() }()
			o.Do(context.Background(), crash, handler(&o, &calls, func() {
				close(started)
				<-release
				handlerDone.Store(true)
			}))
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the panic went on while the handler runs")
		default:
		}
		close(release)
		if p := <-done; p != "policy bug" || !handlerDone.Load() {
			t.Errorf("recovered %v with the handler done %v; want %q after the handler", p, handlerDone.Load(), "policy bug")
		}
	})
}

func TestOnceAllocations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := new(Once)
		var calls atomic.Int32
		op := handler(o, &calls, func() {})
		allocs := testing.AllocsPerRun(100, func() {
			*o = Once{}
			if ran, err := o.Do(context.Background(), resilience.Policy[struct{}]{}, op); !ran || err != nil {
				t.Fatalf("Do = %v, %v; want true, nil", ran, err)
			}
		})
		if allocs != 0 {
			t.Errorf("Do of a handler that returns allocates %v times, want 0", allocs)
		}
	})
}

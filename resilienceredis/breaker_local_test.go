package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// transitions returns the transitions b has queued for OnStateChange, as
// "from>to@generation".
func brTransitions(b *Breaker) []string {
	b.eventsMu.Lock()
	defer b.eventsMu.Unlock()
	var out []string
	for _, e := range b.events {
		if e.mismatch == nil {
			out = append(out, fmt.Sprintf("%v>%v@%d", e.t.From, e.t.To, e.t.Generation))
		}
	}
	return out
}

// Each time the instance starts deciding alone, its local breaker starts
// afresh (closed), and so it does at Close: a local trip of an earlier
// outage does not refuse calls in the next one.
func TestBreakerLocalStartsAfresh(t *testing.T) {
	for _, how := range []string{"outage", "Close"} {
		t.Run(how, func(t *testing.T) {
			b, f := brFakeBreaker(t, WithThreshold(1), WithCooldown(time.Hour))
			b.sync()
			f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
			b.sync() // the instance decides alone
			fail(b)  // the local breaker trips
			if err := succeed(b); !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("local breaker after a failure (Threshold 1): %v, want ErrOpen", err)
			}
			f.set(func(string, []any) ([]any, error) { return brReply(7, 1, 0, 0, 0), nil })
			b.sync() // Redis answers again
			if how == "Close" {
				b.Close()
			} else {
				f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
				b.sync()
			}
			if err := succeed(b); err != nil {
				t.Errorf("local again after %s: %v, want admitted by a fresh local breaker", how, err)
			}
		})
	}
}

// While the instance decides alone, the local breaker's transitions go
// to OnStateChange; the fleet's transitions carry the new generation.
func TestBreakerTransitionsReported(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(1), WithCooldown(time.Hour), WithOnStateChange(func(breaker.Transition) {}))
	b.sync()
	f.set(func(string, []any) ([]any, error) { return brReply(7, 2, 1, time.Hour, 0), nil })
	b.sync() // the fleet tripped
	f.set(func(string, []any) ([]any, error) { return brReply(7, 3, 0, 0, 0), nil })
	b.sync() // and was reset
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	b.sync()                                                            // the instance decides alone
	fail(b)                                                             // its local breaker trips
	want := []string{"closed>open@2", "open>closed@3", "closed>open@3"} // the last: the local breaker's own generation
	got := brTransitions(b)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
}

// A trial's report that fails makes the instance decide alone.
func TestBreakerFailedReportGoesLocal(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(1))
	p := brTrialPermit(t, b, f)
	p.Done(nil)
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	// Done queued the trial's report (the queue has room for MaxTrials+1):
	// bounded, so that a report that was not queued fails here rather
	// than hangs.
	var r report
	select {
	case r = <-b.reports:
	case <-time.After(2 * time.Second):
		t.Fatal("no trial report queued 2s after the trial permit's Done")
	}
	b.sendReport(r)
	if values(t, b.Snapshot())["local"] != 1 {
		t.Errorf("after a failed trial report the instance does not decide alone")
	}
}

// brReloading is a client that can reload its view of a cluster (as a
// *redis.ClusterClient), counting the times it is asked to.
type brReloading struct {
	*redis.Client
	n atomic.Int32
}

func (r *brReloading) ReloadState(context.Context) { r.n.Add(1) }

// A failed round trip asks a client that can reload its view of the
// cluster to do so.
func TestBreakerFailedRoundTripReloads(t *testing.T) {
	f := &brFake{}
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	c.AddHook(f)
	defer c.Close()
	rdb := &brReloading{Client: c}
	b := newBreaker(rdb, "svc", []BreakerOption{WithTimeout(5 * time.Second)})
	b.sync()
	b.Close() // waits for the reload
	if n := rdb.n.Load(); n != 1 {
		t.Errorf("reloads asked after a failed round trip: %d, want 1", n)
	}
}

// A fleet's trip published while the instance decides alone: the
// instance refuses for the cooldown learnt, and the transition it
// reports carries the generation of the new state, the fleet's.
func TestBreakerTripLearntWhileLocalReported(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10), WithOnStateChange(func(breaker.Transition) {}))
	b.sync()
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	b.sync()                      // the instance decides alone
	b.receive("7 2 1 3600000000") // the fleet tripped: open for an hour
	if diff := cmp.Diff([]string{"closed>open@2"}, brTransitions(b)); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
}

package resilienceredis

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// transitions records the From->To of the transitions OnStateChange
// reports.
type transitions struct {
	mu   sync.Mutex
	list []string
}

func (r *transitions) add(t breaker.Transition) {
	r.mu.Lock()
	r.list = append(r.list, t.From.String()+"->"+t.To.String())
	r.mu.Unlock()
}

func (r *transitions) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.list...)
}

// deciding returns a breaker in a synctest bubble, on rdb, whose
// transitions go to rec; of its goroutines only the deliverer runs.
func deciding(t *testing.T, rdb *scripted, rec *transitions, opts ...BreakerOption) *Breaker {
	opts = append([]BreakerOption{WithOnStateChange(rec.add)}, opts...)
	b := newBreaker(rdb.Client, "svc", opts)
	b.wg.Add(1)
	go b.deliverLoop()
	t.Cleanup(func() { b.Close() })
	return b
}

// Redis becomes unreachable while the instance knows the breaker open:
// while the cooldown learnt from Redis has not ended, the state reported
// stays open (no transition) and State reads open; from its end (its very
// nanosecond included), the state is the local breaker's, started afresh:
// closed, reported as a transition from open.
func TestBreakerDownDuringLearntCooldown(t *testing.T) {
	for _, c := range []struct {
		name  string
		into  time.Duration // into the cooldown of 1s when Redis fails
		want  []string
		state breaker.State
	}{
		{"before its end", time.Second - 1, []string{"closed->open"}, breaker.Open},
		{"at its end", time.Second, []string{"closed->open", "open->closed"}, breaker.Closed},
		{"after its end", time.Second + 1, []string{"closed->open", "open->closed"}, breaker.Closed},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb := newScripted(t, nil)
			synctest.Test(t, func(t *testing.T) {
				rec := &transitions{}
				b := deciding(t, rdb, rec, WithCooldown(time.Second))
				time.Sleep(time.Hour)
				b.receive("7 2 1 1000000") // open for 1s
				time.Sleep(c.into)
				b.sync() // fails: the instance decides alone
				synctest.Wait()
				if diff := cmp.Diff(c.want, rec.get()); diff != "" {
					t.Errorf("transitions reported, Redis unreachable %v into the cooldown: mismatch (-want +got):\n%s", c.into, diff)
				}
				if s := b.State(); s != c.state {
					t.Errorf("State %v, want %v", s, c.state)
				}
			})
		})
	}
}

// While the instance decides alone, a state published by another
// instance (pub/sub delivers it; no round trip of this instance was
// answered) is taken as the shared state, and the instance still decides
// alone until Redis answers it: its calls go to the local breaker.
func TestBreakerStaysLocalOnPublishedState(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		rec := &transitions{}
		b := deciding(t, rdb, rec)
		b.receive("7 2 0 0") // closed, generation 2
		b.sync()             // fails: the instance decides alone
		b.receive("7 3 0 0") // a Reset elsewhere: closed, generation 3
		v := values(t, b.Snapshot())
		if v["local"] != 1 || v["generation"] != 3 {
			t.Errorf("after a published state while Redis is unreachable: local %v generation %v, want 1 and 3", v["local"], v["generation"])
		}
		before := v["decisions_local"]
		if err := succeed(b); err != nil {
			t.Fatal(err)
		}
		if got := values(t, b.Snapshot())["decisions_local"]; got != before+1 {
			t.Errorf("a call while Redis is unreachable: decisions_local %v, want %v (the local breaker decides)", got, before+1)
		}
	})
}

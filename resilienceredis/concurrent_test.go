package resilienceredis

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// Six instances, each with its own client, race outcomes and transitions
// (trips, half-open trials, closings, reopenings) for a while. Every
// generation has one state fleet-wide (no two instances saw the same
// generation in different states), each instance sees generations in
// order, the trials of one generation in flight never exceed MaxTrials
// across the fleet, and at
// the end every instance holds the shared state.
func TestConcurrentInstances(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	const n, maxTrials = 6, 2
	var mu sync.Mutex
	byGen := map[uint64]breaker.State{}
	var conflicts []string
	var inst []*Breaker
	var order [n][]uint64
	for i := range n {
		inst = append(inst, running(t, addr, prefix, WithThreshold(3), WithCooldown(20*time.Millisecond),
			WithMaxTrials(maxTrials), WithTimeout(time.Second), WithFlushInterval(5*time.Millisecond),
			WithOnStateChange(func(tr breaker.Transition) {
				mu.Lock()
				defer mu.Unlock()
				order[i] = append(order[i], tr.Generation)
				if s, ok := byGen[tr.Generation]; ok && s != tr.To {
					conflicts = append(conflicts, "gen "+strconv.FormatUint(tr.Generation, 10)+": "+s.String()+" and "+tr.To.String())
				}
				byGen[tr.Generation] = tr.To
			})))
	}
	learnt(t, inst...)
	// A trial holds its place among MaxTrials from its admission until its
	// report reaches Redis, or until its generation ends (a failed trial
	// reopens the breaker, SuccessThreshold successes close it, an expired
	// trial reopens it): the trials of a generation that ended hold no
	// place, and their reports count for nothing, while the next half-open
	// generation admits MaxTrials trials of its own. So the bound is per
	// generation: the trials of one generation in their calls at once.
	// The count is of the calls of the trials (from Allow's return to the
	// end of the call, before Done), which lie within the time Redis holds
	// them while their generation lasts: a count above MaxTrials is a
	// trial Redis admitted beyond it, whatever the scheduling. The trials
	// of all generations in their calls at once are logged: on a loaded
	// machine a trial's call outlives its generation, and that count goes
	// above MaxTrials.
	var trialMu sync.Mutex
	inTrials := map[uint64]int64{}
	var maxSeen, anyGen, maxAnyGen int64
	var admitted, refused atomic.Int64
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for i, b := range inst {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for k := 0; k < 3000 && time.Now().Before(deadline); k++ {
				p, err := b.Allow()
				if err != nil {
					refused.Add(1)
					time.Sleep(time.Millisecond) // a refused client backs off a little
					continue
				}
				admitted.Add(1)
				time.Sleep(200 * time.Microsecond) // the call
				if p.member != "" {
					g := viewGen(p.word)
					trialMu.Lock()
					inTrials[g]++
					anyGen++
					maxSeen, maxAnyGen = max(maxSeen, inTrials[g]), max(maxAnyGen, anyGen)
					trialMu.Unlock()
					time.Sleep(time.Millisecond) // the trial's call
					trialMu.Lock()
					if inTrials[g]--; inTrials[g] == 0 {
						delete(inTrials, g)
					}
					anyGen--
					trialMu.Unlock()
				}
				if r.IntN(3) == 0 {
					p.Done(errBoom)
				} else {
					p.Done(nil)
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	for _, c := range conflicts {
		t.Errorf("instances disagree on a generation's state: %s", c)
	}
	for i, gens := range order {
		for k := 1; k < len(gens); k++ {
			if gens[k] < gens[k-1] {
				t.Errorf("instance %d saw generation %d after %d", i, gens[k], gens[k-1])
				break
			}
		}
	}
	gens := len(byGen)
	mu.Unlock()
	if maxSeen > maxTrials {
		t.Errorf("%d trials of one generation in flight at once across the fleet, want at most MaxTrials (%d)", maxSeen, maxTrials)
	}
	if gens < 3 {
		t.Errorf("only %d generations were seen: the run did not race transitions", gens)
	}
	t.Logf("%d calls admitted, %d refused, %d generations, at most %d trials of one generation at once (%d of any generations)", admitted.Load(), refused.Load(), gens, maxSeen, maxAnyGen)
	rdb := newClient(t)
	redistest.Eventually(t, 5*time.Second, "every instance holds the shared state", func() (bool, string) {
		g := sharedState(t, rdb, prefix)["gen"]
		for i, b := range inst {
			b.sync()
			if got := strconv.FormatUint(viewGen(b.word.Load()), 10); got != g {
				return false, "instance " + strconv.Itoa(i) + " at gen " + got + ", shared " + g
			}
		}
		return true, ""
	})
}

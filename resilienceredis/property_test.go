package resilienceredis

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"
)

// The model of the shared state, in the scripts' terms, with time in
// virtual µs (the shift the test adds to the server's clock; the real
// time that passes during a run is far below the 10s steps it takes).
type sharedModel struct {
	ep, gen, st, streak, ok int
	until                   int64
	trials                  map[string]int64 // member: expiry
	trialEp                 map[string]int   // member: the epoch it was admitted in
	lost                    bool             // the hash is gone: the next script creates it
}

// copy returns a deep copy of m (a snapshot of the shared state).
func (m *sharedModel) copy() *sharedModel {
	c := *m
	c.trials = map[string]int64{}
	for k, v := range m.trials {
		c.trials[k] = v
	}
	return &c
}

const (
	mThreshold = 3
	mCooldown  = int64(60 * time.Second / time.Microsecond)
	mTrialTime = int64(30 * time.Second / time.Microsecond)
	mMaxTrials = 2
	mSuccesses = 2
)

func (m *sharedModel) set(to int, until int64) {
	m.gen++
	m.st, m.until, m.streak, m.ok = to, until, 0, 0
	m.trials = map[string]int64{}
}

// advance makes the transitions that time has made due by now.
func (m *sharedModel) advance(now int64) {
	for {
		if m.st == 1 && now >= m.until {
			m.set(2, 0)
			continue
		}
		if m.st == 2 && len(m.trials) > 0 {
			first := int64(1 << 62)
			for _, e := range m.trials {
				first = min(first, e)
			}
			if first <= now {
				m.set(1, first+mCooldown)
				continue
			}
		}
		return
	}
}

type instModel struct {
	ep, inc, gen, st int    // the view (inc: the jumps to a state the instance did not expect)
	hold             bool   // Threshold failures of its own: calls refused until the view moves
	streak           int    // the instance's consecutive failures in the view's generation
	batch            []bool // outcomes not sent (true: failure), for the view (bInc, bGen) of epoch bEp
	bInc, bGen, bEp  int
	held             []*Permit // trial permits not yet reported
}

// adopt is an instance's view after a script replied m (a round trip
// started after the view last changed: the state as it is).
func (mi *instModel) adopt(m *sharedModel) {
	switch {
	case mi.ep == m.ep && m.gen > mi.gen:
	case mi.ep != m.ep, m.gen != mi.gen || m.st != mi.st:
		mi.inc++
	default:
		return
	}
	mi.ep, mi.gen, mi.st, mi.hold = m.ep, m.gen, m.st, false
}

// carries: outcomes of the batch's view count in the instance's view.
func (mi *instModel) carries() bool {
	return mi.st == 0 && (mi.bGen == 0 || mi.bInc != mi.inc || mi.bGen >= mi.gen)
}

// A rapid property over random interleavings of three instances'
// outcomes, flushes, reads, trials and trial reports, resets, the passing
// of time, and faults of the shared state (the hash deleted, or put back
// to an older snapshot), on the real server: after every step the shared
// state in Redis (generation, state, streak, successful trials, trials
// out) and every instance's view (and local hold) equal the model's.
func TestPropertySharedStateMatchesModel(t *testing.T) {
	// Long runs: a trial that expires needs a trip, a cooldown, a trial
	// and time to pass, in that order.
	if f := flag.Lookup("rapid.steps"); f != nil && f.Value.String() == f.DefValue {
		f.Value.Set("100")
		defer f.Value.Set(f.DefValue)
	}
	addr := redistest.Addr(t)
	base := testPrefix(t)
	var run int
	rapid.Check(t, func(rt *rapid.T) {
		run++
		prefix := base + strconv.Itoa(run) + ":"
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer rdb.Close()
		var inst []*Breaker
		for range 3 {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			b := newBreaker(c, "svc", []BreakerOption{WithPrefix(prefix), WithTimeout(5 * time.Second),
				WithThreshold(mThreshold), WithCooldown(time.Duration(mCooldown) * time.Microsecond),
				WithTrialTimeout(time.Duration(mTrialTime) * time.Microsecond),
				WithMaxTrials(mMaxTrials), WithSuccessThreshold(mSuccesses)})
			defer b.Close()
			inst = append(inst, b)
		}
		m := &sharedModel{lost: true, trials: map[string]int64{}, trialEp: map[string]int{}}
		epochs := 0
		var snapshot *sharedModel
		var snapshotDump string
		ms := make([]*instModel, len(inst))
		var now int64
		// touch is the prelude of a script: the state created if lost,
		// then the transitions time has made due.
		touch := func() {
			if m.lost {
				epochs++
				m.ep, m.gen, m.st, m.streak, m.ok, m.until, m.lost = epochs, 1, 0, 0, 0, 0, false
				m.trials = map[string]int64{}
			}
			m.advance(now)
		}
		for i, b := range inst {
			b.sync()
			touch()
			ms[i] = &instModel{}
			ms[i].adopt(m)
		}
		view := func(i int) { ms[i].adopt(m) }
		apply := func(batch []bool) {
			for _, f := range batch {
				if !f {
					m.streak = 0
					continue
				}
				if m.streak++; m.streak >= mThreshold {
					m.set(1, now+mCooldown)
					break
				}
			}
		}
		var outcome func(rt *rapid.T, i int, failure bool)
		var flush, trial func(rt *rapid.T, i int)
		var report func(rt *rapid.T, i, j int, o breaker.Outcome)

		outcome = func(rt *rapid.T, i int, failure bool) {
			mi := ms[i]
			if mi.st != 0 {
				return // the instance's view is not closed
			}
			p, err := inst[i].Allow()
			if mi.hold {
				if !errors.Is(err, breaker.ErrOpen) {
					rt.Fatalf("an instance holding its calls (%d failures of its own) admitted a call: %v", mThreshold, err)
				}
				return
			}
			if err != nil {
				rt.Fatalf("a closed instance refused: %v", err)
			}
			if failure {
				p.Done(errBoom)
			} else {
				p.Done(nil)
			}
			if mi.bInc != mi.inc || mi.bGen != mi.gen {
				if !mi.carries() {
					mi.batch, mi.streak = nil, 0
				}
				mi.bInc, mi.bGen, mi.bEp = mi.inc, mi.gen, mi.ep
			}
			mi.batch = append(mi.batch, failure)
			if !failure {
				mi.streak = 0
			} else if mi.streak++; mi.streak >= mThreshold {
				mi.streak, mi.hold = 0, true
			}
		}
		flush = func(rt *rapid.T, i int) {
			inst[i].flush()
			mi := ms[i]
			if len(mi.batch) == 0 {
				return
			}
			touch()
			applied := m.st == 0 && mi.bGen == m.gen && mi.bEp == m.ep
			if applied {
				apply(mi.batch)
			}
			view(i)
			if !applied && (mi.bInc != mi.inc || mi.bGen != mi.gen) && mi.carries() {
				apply(mi.batch) // sent again, for the state there is
				view(i)
			}
			mi.batch = nil
		}
		trial = func(rt *rapid.T, i int) {
			inst[i].sync()
			touch()
			view(i)
			if m.st == 0 {
				return // a call would be a closed one: "outcome" covers it
			}
			p, err := inst[i].Allow()
			admit := m.st == 2 && len(ms[i].held) < mMaxTrials && len(m.trials) < mMaxTrials
			if (err == nil) != admit {
				rt.Fatalf("trial on instance %d: err %v, model admits: %v", i, err, admit)
			}
			if err == nil {
				if p.member == "" {
					rt.Fatalf("an admitted half-open call is not a trial")
				}
				m.trials[p.member] = now + mTrialTime
				m.trialEp[p.member] = m.ep
				ms[i].held = append(ms[i].held, &p)
			}
		}
		report = func(rt *rapid.T, i, j int, o breaker.Outcome) {
			p := ms[i].held[j]
			ms[i].held = append(ms[i].held[:j], ms[i].held[j+1:]...)
			p.Report(o)
			inst[i].sendReport(<-inst[i].reports)
			touch()
			if _, out := m.trials[p.member]; out && m.st == 2 && int(viewGen(p.word)) == m.gen && m.trialEp[p.member] == m.ep {
				delete(m.trials, p.member)
				switch o {
				case breaker.Failure:
					m.set(1, now+mCooldown)
				case breaker.Success:
					if m.ok++; m.ok >= mSuccesses {
						m.set(0, 0)
					}
				}
			}
			view(i)
		}
		instance := func(rt *rapid.T) int { return rapid.IntRange(0, 2).Draw(rt, "instance") }
		outcomes := rapid.SampledFrom([]breaker.Outcome{breaker.Success, breaker.Success, breaker.Failure, breaker.Ignored})

		rt.Repeat(map[string]func(*rapid.T){
			"outcome": func(rt *rapid.T) {
				outcome(rt, instance(rt), rapid.Bool().Draw(rt, "failure"))
			},
			"failures, then a flush": func(rt *rapid.T) {
				i := instance(rt)
				for range rapid.IntRange(1, mThreshold+1).Draw(rt, "failures") {
					outcome(rt, i, true)
				}
				flush(rt, i)
			},
			"flush": func(rt *rapid.T) { flush(rt, instance(rt)) },
			"trial": func(rt *rapid.T) { trial(rt, instance(rt)) },
			"trials": func(rt *rapid.T) {
				for range rapid.IntRange(1, mMaxTrials+1).Draw(rt, "trials") {
					trial(rt, instance(rt))
				}
			},
			"report": func(rt *rapid.T) {
				i := instance(rt)
				if len(ms[i].held) == 0 {
					rt.Skip("no trial held")
				}
				report(rt, i, rapid.IntRange(0, len(ms[i].held)-1).Draw(rt, "trial"), outcomes.Draw(rt, "outcome"))
			},
			"report every trial": func(rt *rapid.T) {
				for i := range ms {
					for len(ms[i].held) > 0 {
						report(rt, i, 0, outcomes.Draw(rt, "outcome"))
					}
				}
			},
			"sync": func(rt *rapid.T) {
				i := rapid.IntRange(0, 2).Draw(rt, "instance")
				inst[i].sync()
				touch()
				view(i)
			},
			"state lost": func(rt *rapid.T) {
				if err := rdb.Del(context.Background(), prefix+"br:{svc}", prefix+"br:{svc}:window").Err(); err != nil {
					rt.Fatal(err)
				}
				m.lost = true
			},
			"snapshot": func(rt *rapid.T) {
				if m.lost {
					rt.Skip("no state to snapshot")
				}
				d, err := rdb.Dump(context.Background(), prefix+"br:{svc}").Result()
				if err != nil {
					rt.Fatal(err)
				}
				snapshot, snapshotDump = m.copy(), d
			},
			"state goes back to the snapshot": func(rt *rapid.T) {
				if snapshot == nil {
					rt.Skip("no snapshot")
				}
				if err := rdb.RestoreReplace(context.Background(), prefix+"br:{svc}", 0, snapshotDump).Err(); err != nil {
					rt.Fatal(err)
				}
				trialEp := m.trialEp
				m = snapshot.copy()
				m.trialEp = trialEp
			},
			"reset": func(rt *rapid.T) {
				i := rapid.IntRange(0, 2).Draw(rt, "instance")
				if err := inst[i].Reset(context.Background()); err != nil {
					rt.Fatal(err)
				}
				ms[i].batch = nil // Reset drops the outcomes its instance had not sent
				touch()
				m.set(0, 0)
				view(i)
			},
			"time passes": func(rt *rapid.T) {
				now += int64(rapid.IntRange(1, 7).Draw(rt, "tens of seconds")) * 10_000_000
				for _, b := range inst {
					b.shift.Store(now)
				}
			},
			"": func(rt *rapid.T) {
				got, err := rdb.HGetAll(context.Background(), prefix+"br:{svc}").Result()
				if err != nil {
					rt.Fatal(err)
				}
				trials := len(strings.Fields(got["trials"])) / 2
				if m.lost {
					return // nothing to compare until a script creates the state again
				}
				want := fmt.Sprintf("gen %d st %d streak %d ok %d trials %d", m.gen, m.st, m.streak, m.ok, len(m.trials))
				have := fmt.Sprintf("gen %s st %s streak %s ok %s trials %d", got["gen"], got["st"], got["streak"], got["ok"], trials)
				if diff := cmp.Diff(want, have); diff != "" {
					rt.Fatalf("shared state mismatch (-model +redis):\n%s", diff)
				}
				for i, b := range inst {
					w := b.word.Load()
					if g, s, h := int(viewGen(w)), int(viewState(w)), viewHeld(w); g != ms[i].gen || s != ms[i].st || h != ms[i].hold {
						rt.Fatalf("instance %d's view: gen %d st %d hold %v, model gen %d st %d hold %v", i, g, s, h, ms[i].gen, ms[i].st, ms[i].hold)
					}
				}
			},
		})
	})
}

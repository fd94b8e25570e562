package resilienceredis

import (
	"context"
	"flag"
	"fmt"
	"strconv"
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
	gen, st, streak, ok int
	until               int64
	trials              map[string]int64 // member: expiry
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
	gen, st int    // the view
	batch   []bool // outcomes not sent (true: failure), for generation batchGen
	batchG  int
	held    []*Permit // trial permits not yet reported
}

// A rapid property over random interleavings of three instances'
// outcomes, flushes, reads, trials and trial reports, resets and the
// passing of time, on the real server: after every step the shared state
// in Redis (generation, state, streak, successful trials, trials out) and
// every instance's view equal the model's.
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
		m := &sharedModel{gen: 1, trials: map[string]int64{}}
		ms := make([]*instModel, len(inst))
		var now int64
		for i, b := range inst {
			b.sync()
			ms[i] = &instModel{gen: 1}
		}
		view := func(i int) { ms[i].gen, ms[i].st = m.gen, m.st }
		var outcome func(rt *rapid.T, i int, failure bool)
		var flush, trial func(rt *rapid.T, i int)
		var report func(rt *rapid.T, i, j int, o breaker.Outcome)

		outcome = func(rt *rapid.T, i int, failure bool) {
			if ms[i].st != 0 {
				return // the instance's view is not closed
			}
			p, err := inst[i].Allow()
			if err != nil {
				rt.Fatalf("a closed instance refused: %v", err)
			}
			if failure {
				p.Done(errBoom)
			} else {
				p.Done(nil)
			}
			if ms[i].batchG != ms[i].gen {
				ms[i].batch, ms[i].batchG = nil, ms[i].gen
			}
			ms[i].batch = append(ms[i].batch, failure)
		}
		flush = func(rt *rapid.T, i int) {
			inst[i].flush()
			mi := ms[i]
			if len(mi.batch) == 0 {
				return
			}
			m.advance(now)
			if m.st == 0 && mi.batchG == m.gen {
				for _, f := range mi.batch {
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
			mi.batch = nil
			view(i)
		}
		trial = func(rt *rapid.T, i int) {
			inst[i].sync()
			m.advance(now)
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
				ms[i].held = append(ms[i].held, &p)
			}
		}
		report = func(rt *rapid.T, i, j int, o breaker.Outcome) {
			p := ms[i].held[j]
			ms[i].held = append(ms[i].held[:j], ms[i].held[j+1:]...)
			p.Report(o)
			inst[i].sendReport(<-inst[i].reports)
			m.advance(now)
			if _, out := m.trials[p.member]; out && m.st == 2 && int(viewGen(p.word)) == m.gen {
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
				m.advance(now)
				view(i)
			},
			"reset": func(rt *rapid.T) {
				i := rapid.IntRange(0, 2).Draw(rt, "instance")
				if err := inst[i].Reset(context.Background()); err != nil {
					rt.Fatal(err)
				}
				m.advance(now)
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
				trials, err := rdb.ZCard(context.Background(), prefix+"br:{svc}:trials").Result()
				if err != nil {
					rt.Fatal(err)
				}
				want := fmt.Sprintf("gen %d st %d streak %d ok %d trials %d", m.gen, m.st, m.streak, m.ok, len(m.trials))
				have := fmt.Sprintf("gen %s st %s streak %s ok %s trials %d", got["gen"], got["st"], got["streak"], got["ok"], trials)
				if diff := cmp.Diff(want, have); diff != "" {
					rt.Fatalf("shared state mismatch (-model +redis):\n%s", diff)
				}
				for i, b := range inst {
					w := b.word.Load()
					if g, s := int(viewGen(w)), int(viewState(w)); g != ms[i].gen || s != ms[i].st {
						rt.Fatalf("instance %d's view: gen %d st %d, model gen %d st %d", i, g, s, ms[i].gen, ms[i].st)
					}
				}
			},
		})
	})
}

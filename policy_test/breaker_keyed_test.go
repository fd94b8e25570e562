package policytest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// kModel is the reference model of a breaker.Keyed: two recency lists,
// most recently used first: the keys whose breakers are closed (and not
// forced), and the others. A use moves a key to the front of its list; a
// change between closed and not closed moves it to the front of the other;
// a new key beyond MaxKeys forgets the back of the closed list, else the
// back of the others (and reports it).
type kModel struct {
	maxKeys            int
	closed, others     []int
	evicted, notClosed uint64
	events             []telemetry.Event // the breaker.evicted events expected
	state              map[int]string    // tracked keys: "closed", "open", or "forced" (closed)
}

func (m *kModel) remove(key int) {
	m.closed = slices.DeleteFunc(m.closed, func(k int) bool { return k == key })
	m.others = slices.DeleteFunc(m.others, func(k int) bool { return k == key })
}

// place puts a tracked key at the front of the list for its state.
func (m *kModel) place(key int) {
	m.remove(key)
	if m.state[key] == "closed" {
		m.closed = slices.Insert(m.closed, 0, key)
	} else {
		m.others = slices.Insert(m.others, 0, key)
	}
}

func (m *kModel) use(key int) {
	if _, ok := m.state[key]; !ok {
		if len(m.state) >= m.maxKeys {
			var gone int
			if n := len(m.closed); n > 0 {
				gone = m.closed[n-1]
			} else {
				gone = m.others[len(m.others)-1]
				from := "open"
				if m.state[gone] == "forced" {
					from = "closed"
				}
				m.events = append(m.events, telemetry.Event{Type: breaker.EventEvicted, Name: "k", Key: itoa(gone), From: from})
				m.notClosed++
			}
			m.remove(gone)
			delete(m.state, gone)
			m.evicted++
		}
		m.state[key] = "closed"
	}
	m.place(key)
}

// change sets a key's state, as a transition (or manual control) of its
// breaker does, held by its last user: it moves only if it is still
// tracked and the change is between closed and not closed.
func (m *kModel) change(key int, to string) {
	from, ok := m.state[key]
	if !ok {
		return // forgotten: the change is the orphan breaker's alone
	}
	m.state[key] = to
	if (from == "closed") != (to == "closed") {
		m.place(key)
	}
}

func itoa(k int) string { return string(rune('a' + k)) }

// TestKeyedMatchesModel drives a breaker.Keyed with random uses of keys
// and changes of their breakers' states (trips, resets, ForceClosed,
// through breakers held from an earlier use, possibly forgotten since):
// which keys it tracks, in which order, what it forgets and what it
// reports match the model.
func TestKeyedMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxKeys := rapid.IntRange(1, 5).Draw(t, "maxKeys")
		keys := rapid.IntRange(0, 2*maxKeys+1)
		var got []telemetry.Event
		k := breaker.NewKeyed[string](breaker.WithName("k"), breaker.WithClock(clock.NewFake()),
			breaker.WithThreshold(1), breaker.WithCooldown(time.Hour), breaker.WithMaxKeys(maxKeys),
			breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
				if e.Type == breaker.EventEvicted {
					got = append(got, e)
				}
			})))
		m := &kModel{maxKeys: maxKeys, state: map[int]string{}}
		held := map[int]*breaker.Breaker{} // each key's breaker as its last user got it
		t.Repeat(map[string]func(*rapid.T){
			"use": func(t *rapid.T) {
				key := keys.Draw(t, "key")
				held[key] = k.Breaker(itoa(key))
				m.use(key)
			},
			// held[key] is the tracked breaker of key if key is tracked (every
			// use updates it), else an orphan: its changes move nothing.
			"trip": func(t *rapid.T) {
				key := keys.Draw(t, "key")
				b := held[key]
				if b == nil {
					t.Skip("never used")
				}
				if s := b.Stats(); s.State != breaker.Closed || s.Forced {
					t.Skip("not closed and unforced: Record does not trip it")
				}
				b.Record(true)
				m.change(key, "open")
			},
			"reset": func(t *rapid.T) {
				key := keys.Draw(t, "key")
				if b := held[key]; b != nil {
					b.Reset()
					m.change(key, "closed")
				}
			},
			"forceClosed": func(t *rapid.T) {
				key := keys.Draw(t, "key")
				if b := held[key]; b != nil {
					b.ForceClosed()
					m.change(key, "forced")
				}
			},
			"": func(t *rapid.T) {
				var want []string
				for _, key := range append(slices.Clone(m.others), m.closed...) {
					want = append(want, itoa(key))
				}
				var keysGot []string
				for key := range k.All() {
					keysGot = append(keysGot, key)
				}
				if diff := cmp.Diff(want, keysGot); diff != "" {
					t.Fatalf("tracked keys mismatch (-want +got):\n%s", diff)
				}
				wantStats := breaker.KeyedStats{Keys: len(m.state), MaxKeys: maxKeys, Evicted: m.evicted, EvictedNotClosed: m.notClosed}
				if diff := cmp.Diff(wantStats, k.Stats()); diff != "" {
					t.Fatalf("Stats() mismatch (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(m.events, got); diff != "" {
					t.Fatalf("eviction events mismatch (-want +got):\n%s", diff)
				}
			},
		})
	})
}

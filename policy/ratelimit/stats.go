package ratelimit

import (
	"fmt"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Stats is a snapshot of a limiter's live state, from [Limiter.Stats].
type Stats struct {
	Rate   float64 // events per second, as [Limiter.Rate]
	Burst  int     // the most tokens the bucket holds, as [Limiter.Burst]
	Tokens float64 // tokens in the bucket now, as [Limiter.Tokens]
	// Refused is the number of calls refused since the limiter was made
	// (Allow and AllowN returning false, Wait and WaitN refused with
	// ErrLimited). It only grows.
	Refused uint64
}

// Stats returns a snapshot of the limiter now: Rate, Burst and Tokens as
// the methods of those names read them, one after the other (a SetRate or
// SetBurst at that instant may fall between them), and Refused. It takes
// no lock and allocates nothing; it is safe to call at any time from any
// goroutine.
func (l *Limiter) Stats() Stats {
	return Stats{Rate: l.Rate(), Burst: l.Burst(), Tokens: l.Tokens(), Refused: l.rejected.Load()}
}

// Name returns the limiter's name (its Config.Name).
func (l *Limiter) Name() string { return l.cur.Load().p.cfg.Name }

// Snapshot returns [Limiter.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// Kind, the limiter's Name, no State, Refused
// (Stats.Refused), and the gauges rate ("{token}/s"), burst and tokens
// ("{token}"; negative: owed to waiters). It allocates the Values slice.
func (l *Limiter) Snapshot() telemetry.Snapshot {
	s := l.Stats()
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    l.Name(),
		Refused: s.Refused,
		Values:  limiterValues(s.Rate, s.Burst, s.Tokens, true),
	}
}

func limiterValues(rate float64, burst int, tokens float64, withTokens bool) []telemetry.Value {
	vs := make([]telemetry.Value, 0, 3)
	vs = append(vs, []telemetry.Value{
		{Name: "rate", Unit: "{token}/s", Help: "Tokens the rate limiter adds per second.", Value: rate},
		{Name: "burst", Unit: "{token}", Help: "The most tokens the rate limiter's bucket holds.", Value: float64(burst)},
	}...)
	if withTokens {
		vs = append(vs, telemetry.Value{Name: "tokens", Unit: "{token}", Help: "Tokens in the rate limiter's bucket now (negative: owed to waiters).", Value: tokens})
	}
	return vs
}

// Name returns the Keyed's name (its Config.Name), shared by its
// limiters.
func (k *Keyed[K]) Name() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.p.cfg.Name
}

// Snapshot returns the Keyed in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// Kind, the Keyed's Name, no State, Refused, the refusals
// of the limiters of the keys tracked now (a forgotten key's refusals
// leave the sum, so it may fall), Keys (the keys tracked, those whose
// bucket holds less than one token, and the [telemetry.TopKeys] keys with
// the most refusals, said with fmt.Sprint unless they are strings; keys
// tied for the last place go by use, the most recently used kept, since
// naming every tied key under the lock would allocate), and
// the gauges rate and burst (as [Limiter.Snapshot] has them), keys,
// max_keys and empty_keys ("{key}").
//
// It reads every tracked key's bucket under the Keyed's lock (each read
// without a lock of its own), and allocates the Values and the keys of
// Top.
func (k *Keyed[K]) Snapshot() telemetry.Snapshot {
	k.mu.Lock()
	p := k.p
	sum := telemetry.KeySummary{Keys: k.n, MaxKeys: k.maxKeys}
	var refused uint64
	type top struct {
		e       *entry[K]
		refused uint64
	}
	var tops [telemetry.TopKeys]top // by refusals, most first: names made outside the lock
	for e := k.lru.next; e != &k.lru; e = e.next {
		n := e.lim.rejected.Load()
		refused += n
		if e.lim.Tokens() < 1 {
			sum.Open++
		}
		if n > tops[len(tops)-1].refused {
			i := len(tops) - 1
			for i > 0 && tops[i-1].refused < n {
				tops[i] = tops[i-1]
				i--
			}
			tops[i] = top{e, n}
		}
	}
	var keys [telemetry.TopKeys]K
	for i, t := range tops {
		if t.e != nil {
			keys[i] = t.e.key
		}
	}
	k.mu.Unlock()
	for i, t := range tops {
		if t.e != nil {
			sum.Top = telemetry.AddTop(sum.Top, telemetry.KeyStat{Key: keyName(keys[i]), Refused: t.refused})
		}
	}
	rate := p.cfg.Rate
	if rate == resilience.Off {
		rate = 0
	}
	vs := limiterValues(rate, int(p.burst), 0, false)
	vs = append(vs,
		telemetry.Value{Name: "keys", Unit: "{key}", Help: "Keys tracked now, each with its bucket.", Value: float64(sum.Keys)},
		telemetry.Value{Name: "max_keys", Unit: "{key}", Help: "The most keys tracked (MaxKeys).", Value: float64(sum.MaxKeys)},
		telemetry.Value{Name: "empty_keys", Unit: "{key}", Help: "Keys whose bucket holds less than one token now.", Value: float64(sum.Open)},
	)
	return telemetry.Snapshot{Kind: Kind, Name: p.cfg.Name, Refused: refused, Values: vs, Keys: &sum}
}

// keyName says a key as a KeyStat does: a string as it is, any other
// with fmt.Sprint.
func keyName[K comparable](k K) string {
	if s, ok := any(k).(string); ok {
		return s
	}
	return fmt.Sprint(k)
}

package ratelimit

import "github.com/f0b5b96b/resilience/telemetry"

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
// telemetry.RateLimit, the limiter's Name, no State, Refused
// (Stats.Refused), and the gauges rate ("{token}/s"), burst and tokens
// ("{token}"; negative: owed to waiters). It allocates the Values slice.
func (l *Limiter) Snapshot() telemetry.Snapshot {
	s := l.Stats()
	return telemetry.Snapshot{
		Kind:    telemetry.RateLimit,
		Name:    l.Name(),
		Refused: s.Refused,
		Values:  limiterValues(s.Rate, s.Burst, s.Tokens, true),
		Limiter: telemetry.LimiterStats{Rate: s.Rate, Burst: s.Burst, Tokens: s.Tokens},
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

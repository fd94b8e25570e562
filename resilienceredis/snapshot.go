package resilienceredis

import (
	"errors"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The states of a limiter's snapshot: where its decisions are made now.
const (
	// StateShared: Redis answers; decisions are the fleet's bucket's.
	StateShared = "shared"
	// StateLocal: Redis did not answer the last round trip; decisions
	// are the instance's fallback's (see LimiterConfig.FallbackRate) until
	// a probe, every ProbeInterval, is answered. After Close, for good,
	// with Reason ErrClosed's message.
	StateLocal = "local"
)

// The events a [Breaker] gives its [BreakerConfig.Observer]: their Kind is
// "breaker", their Name the breaker's.
const (
	// BreakerLocal: Redis did not answer (an error, or a round trip
	// slower than Timeout) or refused the breaker's commands, and the
	// instance starts deciding alone with its local breaker; one event
	// each time it starts (not one per decision: the snapshot's
	// decisions_local counts those). Err is why: the round trip's error;
	// for one that Timeout ended, "resilienceredis: Redis did not answer
	// within the timeout", wrapping the client's error, whatever the
	// client's ContextTimeoutEnabled; for a refusal that asking again will
	// not mend (NOPERM, WRONGTYPE, no scripting), an error matching
	// [ErrUnusable], wrapping the server's.
	BreakerLocal telemetry.Type = "breaker.local"
	// BreakerFenced: Redis refused a batch of this instance's outcomes,
	// counted while closed, because the shared state had moved to another
	// generation meanwhile (another instance tripped the breaker, a
	// Reset): the fence that keeps a stale instance from writing over a
	// newer state. Err matches ErrFenced and says how many outcomes, of
	// which generation.
	BreakerFenced telemetry.Type = "breaker.fenced"
)

// ErrClosed is why a guard decides locally after its Close: the Reason of
// its snapshot and the Err of its local events (LimiterLocal,
// BreakerLocal, RetryBudgetLocal), and the error of the calls that would
// ask Redis (Check, Reset, Shared).
var ErrClosed = errors.New("resilienceredis: closed")

// ErrFenced matches the error of a BreakerFenced event.
var ErrFenced = errors.New("resilienceredis: Redis refused a batch of outcomes of an older generation")

// Name returns the keyed limiter's name.
func (k *KeyedLimiter) Name() string {
	if k.p == nil {
		zeroValue("KeyedLimiter", "Name", "NewKeyedLimiter")
	}
	return k.p.cfg.Name
}

// Snapshot returns the limiter's state in the shape all guards share, for
// a telemetry.Registry, exporters, dashboards and health checks: Kind
// "ratelimit", the limiter's Name, State [StateShared] or [StateLocal]
// (with Reason, while local, the error of the round trip that failed
// last; a KeyedLimiter on a Redis Cluster is local while the decisions of
// any slot are), Refused (the calls it refused, by the fleet's bucket or the
// fallback, since it was made), and these values:
//
//	local             gauge    "1"           1 while decisions are the instance's fallback's, else 0
//	decisions_shared  counter  "{decision}"  decisions the fleet's bucket made, in Redis
//	decisions_local   counter  "{decision}"  decisions the fallback made (each also a LimiterLocal event)
//
// The counts are of this instance, since the limiter was made; the fleet's
// bucket is in Redis, which a snapshot does not ask. A Limiter of a
// [KeyedLimiter] returns the KeyedLimiter's snapshot. Snapshot is safe for
// simultaneous use and allocates the Values slice.
func (l *Limiter) Snapshot() telemetry.Snapshot {
	if l.p == nil {
		zeroValue("Limiter", "Snapshot", "NewLimiter")
	}
	return l.p.snapshot()
}

// Snapshot returns the keyed limiter's state, over all its keys, as
// [Limiter.Snapshot] describes it. Its Keys is nil: the keys' buckets are
// in Redis, and the instance does not track them.
func (k *KeyedLimiter) Snapshot() telemetry.Snapshot {
	if k.p == nil {
		zeroValue("KeyedLimiter", "Snapshot", "NewKeyedLimiter")
	}
	return k.p.snapshot()
}

func (p *limiterParams) snapshot() telemetry.Snapshot {
	s := telemetry.Snapshot{Kind: ratelimit.Kind, Name: p.cfg.Name, State: StateShared, Refused: p.refused.Load()}
	local := 0.0
	if p.remote.down() {
		s.State, s.Reason, local = StateLocal, p.why().Error(), 1
	}
	s.Values = []telemetry.Value{
		{Name: "local", Unit: "1", Help: "1 while the instance decides with its own fallback because Redis did not answer, else 0.", Value: local},
		{Name: "decisions_shared", Unit: "{decision}", Type: telemetry.CounterValue, Help: "Decisions made by the fleet's bucket in Redis.", Value: float64(p.sharedN.Load())},
		{Name: "decisions_local", Unit: "{decision}", Type: telemetry.CounterValue, Help: "Decisions made by the instance's fallback because Redis did not answer.", Value: float64(p.localN.Load())},
	}
	return s
}

// Snapshot returns the breaker's state as this instance knows it, in the
// shape all guards share: Kind "breaker", the breaker's Name, State its
// [Breaker.State] ("closed", "open", "half-open"; while the instance
// decides alone, because Redis did not answer or refuses the breaker's
// commands, the local breaker's state: never [StateLocal], which is a
// limiter's), Reason (while the instance decides alone, the error of the
// round trip that failed last, one matching [ErrUnusable] for a refusal),
// Refused (the calls this instance refused), and these values; the value
// local tells whether the instance decides alone:
//
//	local             gauge    "1"          1 while the instance decides alone (Redis did not answer or refuses the commands), else 0
//	generation        gauge    "{generation}"  the shared state's generation, as last learnt
//	decisions_local   counter  "{call}"     calls the local breaker decided
//	outcomes_sent     counter  "{outcome}"  outcomes of closed-state calls counted in Redis
//	outcomes_fenced   counter  "{outcome}"  outcomes Redis refused: counted for an older generation
//	batches_fenced    counter  "{batch}"    batches Redis refused so (each a BreakerFenced event)
//	outcomes_dropped  counter  "{outcome}"  outcomes dropped before Redis counted them (older generation, Reset, Redis unreachable)
//
// The counts are of this instance, since the breaker was made; the fleet's
// counts are in Redis, which a snapshot does not ask. Snapshot is safe for
// simultaneous use and allocates the Values slice.
func (b *Breaker) Snapshot() telemetry.Snapshot {
	if b.keys == nil {
		zeroValue("Breaker", "Snapshot", "NewBreaker")
	}
	w := b.word.Load()
	s := telemetry.Snapshot{Kind: breaker.Kind, Name: b.cfg.Name, State: b.visible(w).String(), Refused: b.refused.Load()}
	local := 0.0
	if viewDown(w) {
		local = 1
		if r := b.why.Load(); r != nil {
			s.Reason = r.err.Error()
		}
	}
	q := &b.batch
	q.mu.Lock()
	sent, fenced, batches, dropped := q.sent, q.bad, q.fenced, q.dropped
	q.mu.Unlock()
	s.Values = []telemetry.Value{
		{Name: "local", Unit: "1", Help: "1 while the instance decides alone with its local breaker because Redis did not answer or refuses its commands, else 0.", Value: local},
		{Name: "generation", Unit: "{generation}", Help: "The generation of the shared state, as this instance last learnt it.", Value: float64(viewGen(w))},
		{Name: "decisions_local", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls decided by the instance's local breaker because Redis did not answer.", Value: float64(b.localN.Load())},
		{Name: "outcomes_sent", Unit: "{outcome}", Type: telemetry.CounterValue, Help: "Outcomes of closed-state calls sent to Redis and counted there.", Value: float64(sent)},
		{Name: "outcomes_fenced", Unit: "{outcome}", Type: telemetry.CounterValue, Help: "Outcomes Redis refused because they were counted for an older generation.", Value: float64(fenced)},
		{Name: "batches_fenced", Unit: "{batch}", Type: telemetry.CounterValue, Help: "Batches of outcomes Redis refused because they were counted for an older generation.", Value: float64(batches)},
		{Name: "outcomes_dropped", Unit: "{outcome}", Type: telemetry.CounterValue, Help: "Outcomes dropped before Redis counted them: of an older generation, before a Reset, or while Redis did not answer.", Value: float64(dropped)},
	}
	return s
}

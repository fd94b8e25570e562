package adaptive

import "github.com/f0b5b96b/resilience/telemetry"

// Name returns the limiter's name (its Config.Name).
func (l *Limiter) Name() string { return l.cfg.Name }

// Snapshot returns [Limiter.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// "adaptive", the limiter's Name, no State, Refused, and these gauges:
//
//	limit      "{call}"  calls that may be in flight at once now
//	in_flight  "{call}"  calls holding a permit now
//	queued     "{call}"  callers waiting for admission now
//	latency    "s"       mean latency of the last window's successful calls
//	baseline   "s"       the estimate of the latency without queueing
//
// It allocates the Values slice.
func (l *Limiter) Snapshot() telemetry.Snapshot {
	s := l.Stats()
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    l.cfg.Name,
		Refused: s.Refused,
		Values: []telemetry.Value{
			{Name: "limit", Unit: "{call}", Help: "Calls the adaptive limiter lets be in flight at once now.", Value: float64(s.Limit)},
			{Name: "in_flight", Unit: "{call}", Help: "Calls holding a permit of the adaptive limiter now.", Value: float64(s.InFlight)},
			{Name: "queued", Unit: "{call}", Help: "Callers waiting for admission now.", Value: float64(s.Queued)},
			{Name: "latency", Unit: "s", Help: "Mean latency of the successful calls of the last window (0 before the first).", Value: s.Latency.Seconds()},
			{Name: "baseline", Unit: "s", Help: "The limiter's estimate of the dependency's latency without queueing.", Value: s.Baseline.Seconds()},
		},
	}
}

// Kind is the kind of an adaptive limiter's snapshots and events.
const Kind telemetry.Kind = "adaptive"

// The events of the adaptive limiter, which this package owns (as each
// policy owns its events: breaker.EventOpened, ...). A [Limiter] reports
// them to its [Config.Observer].
const (
	// EventRefused: the limiter refused a call (Err: the refusal,
	// matching [ErrFull], or [ErrQueueTimeout] after MaxWait in the
	// queue). Exporters count it as a call refused; a telemetry.Slog
	// writes it at Debug, as every "*.refused" event.
	EventRefused telemetry.Type = "adaptive.refused"
)

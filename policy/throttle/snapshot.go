package throttle

import "github.com/f0b5b96b/resilience/telemetry"

// Name returns the throttler's name (its Config.Name).
func (t *Throttler) Name() string { return t.name }

// Kind is the kind of a throttler's snapshots and events.
const Kind telemetry.Kind = "throttle"

// The events of the throttler, which this package owns (as each policy
// owns its events: breaker.EventOpened, ...). A [Throttler] reports them to
// its [Config.Observer].
const (
	// EventRefused: the throttler refused a request (Err: the refusal, a
	// *resilience.RefusedError matching [ErrThrottled]). Exporters count
	// it as a call refused; a telemetry.Slog writes it at Debug, as every
	// "*.refused" event.
	EventRefused telemetry.Type = "throttle.refused"
)

// Snapshot returns [Throttler.Stats] in the shape all guards share, for a
// telemetry.Registry, exporters, dashboards and health checks: Kind
// "throttle", the throttler's Name, no State, Refused (the requests it
// dropped), and these gauges over the window:
//
//	requests            "{request}"  requests sent (not those refused)
//	accepts             "{request}"  requests the dependency accepted
//	accept_ratio        "1"          accepts / requests; 1 with no request
//	refuse_probability  "1"          the probability a request now is refused
//
// It allocates the Values slice.
func (t *Throttler) Snapshot() telemetry.Snapshot {
	s := t.Stats()
	ratio := 1.0
	if s.Requests > 0 {
		ratio = float64(s.Accepts) / float64(s.Requests)
	}
	return telemetry.Snapshot{
		Kind:    Kind,
		Name:    t.name,
		Refused: s.Refused,
		Values: []telemetry.Value{
			{Name: "requests", Unit: "{request}", Help: "Requests sent over the window (not those the throttler refused).", Value: float64(s.Requests)},
			{Name: "accepts", Unit: "{request}", Help: "Requests the dependency accepted over the window.", Value: float64(s.Accepts)},
			{Name: "accept_ratio", Unit: "1", Help: "Accepts / requests over the window, in [0, 1]; 1 with no request.", Value: ratio},
			{Name: "refuse_probability", Unit: "1", Help: "The probability that a request made now is refused, in [0, 1).", Value: s.Probability},
		},
	}
}

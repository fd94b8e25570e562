package resilience

import "github.com/f0b5b96b/resilience/telemetry"

// FallbackEventKind is the kind of the fallback's events, as
// telemetry.Event.Kind reads it. It is a telemetry.Kind, not a [Kind]:
// [KindFallback] is the fallback's kind as a [Layer] of a chain.
const FallbackEventKind telemetry.Kind = "fallback"

// The events of the fallback ([Policy.Fallback], [Fallback]), reported to
// its observer ([WithFallbackObserver]). Every event carries the
// fallback's Name. The string value is stable: a dashboard or an alert may
// key on it.
const (
	// EventFallbackUsed: the fallback replaced an error with its own
	// result. Err (the error it replaced).
	EventFallbackUsed telemetry.Type = "fallback.used"
)

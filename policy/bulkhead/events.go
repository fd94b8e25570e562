package bulkhead

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of a bulkhead's snapshots and events.
const Kind telemetry.Kind = "bulkhead"

// The events of the bulkhead, reported to its observer ([WithObserver]).
// Every event carries the bulkhead's Name; the other fields are zero
// unless listed. Their string values are stable: a dashboard or an alert
// may key on them.
const (
	// EventQueuedAdmitted: a call that waited in the queue got a slot.
	// Wait (the time in the queue).
	EventQueuedAdmitted telemetry.Type = "bulkhead.queued_admitted"
	// EventRefused: the bulkhead refused a call (full, or the queue's
	// maximum wait passed; TryAcquire's false included). Err, Wait (the
	// time in the queue).
	EventRefused telemetry.Type = "bulkhead.refused"
)

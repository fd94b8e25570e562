package resilienceotel

import "github.com/f0b5b96b/resilience/resilienceotel/internal/export"

// The events that are the outcome of a call through a policy count in
// resilience.calls as well as in resilience.events, by
// resilience.outcome (export.EventOutcomes); the events whose Wait is a
// wait that a call makes (a retry's backoff, time in a bulkhead's queue,
// for a token) record it in resilience.wait.duration (export.WaitEvents,
// export.RecordsWait: a bulkhead.refused event's wait only if the call
// waited in the queue, a wait of resilience.Never never).
var (
	eventOutcomes = export.EventOutcomes
	waitEvents    = export.WaitEvents
	recordsWait   = export.RecordsWait
)

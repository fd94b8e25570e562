package resilienceprom

import "github.com/f0b5b96b/resilience/resilienceprom/internal/export"

// The events that are the outcome of a call through a policy count in
// resilience_calls_total as well as in resilience_events_total, by outcome
// (export.EventOutcomes); the events whose Wait is a wait that a call
// makes (a retry's backoff, time in a bulkhead's queue, for a token)
// record it in resilience_wait_duration_seconds (export.RecordsWait: a
// bulkhead.refused event's wait only if the call waited in the queue, a
// wait of resilience.Never never).
var (
	eventOutcomes = export.EventOutcomes
	recordsWait   = export.RecordsWait
)

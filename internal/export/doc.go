// Package export holds what the metric exporters (resilienceotel and
// resilienceprom) share and is neither OpenTelemetry's nor Prometheus':
// the outcome of a call and of an event, which events carry a wait, the
// error.type of an error, the lock-free sets of series by key, the bound on
// an attribute's distinct values, and the timing and attempt counting of
// the Measure layers. Each exporter turns these into its own instruments,
// names and attributes.
package export

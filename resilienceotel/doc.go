// Package resilienceotel reports what the resilience policies do as
// OpenTelemetry metrics.
package resilienceotel

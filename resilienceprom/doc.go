// Package resilienceprom exposes what the resilience policies do as
// Prometheus metrics.
package resilienceprom

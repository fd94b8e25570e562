// Package exporttest holds what the tests and benchmarks of the metric
// exporters (resilienceotel and resilienceprom) share: the events they
// observe, the scripted outage they drive, the error types they expect,
// and the bodies of their benchmarks and allocation tests. Each exporter's
// tests read the metrics in their own way; what they feed the exporter,
// and what it must cost, is here, once. It is imported by tests only, and
// like the core module it imports the standard library and the core only.
package exporttest

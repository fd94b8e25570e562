package resilience

// Off is the value that switches off a setting whose default is on, the same
// in every package: retry.WithAttempts(resilience.Off) retries without a
// limit on the attempts, breaker.WithThreshold(resilience.Off) drops the
// consecutive-failures rule. Only settings whose doc says so take it; in a
// Config read from JSON, such a field is -1, or "off" for a duration.
//
// Off exists because a zero setting always means its documented default
// (see "Configuration" in the package doc): 0 can never also mean "none".
const Off = -1

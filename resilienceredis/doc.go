// Package resilienceredis shares a rate limit and a circuit breaker across
// a fleet of instances, on Redis.
package resilienceredis

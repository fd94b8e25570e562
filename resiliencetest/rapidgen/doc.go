// Package rapidgen has pgregory.net/rapid generators for property-based
// tests of pipelines: faults, outage timelines and latencies of the fault
// kit (package resiliencetest), and settings of the policies (backoff
// schedules, retry, breaker, rate limiter) that always build.
//
// It is a module of its own, github.com/f0b5b96b/resilience/resiliencetest/rapidgen,
// so that the core module's packages depend on the standard library only:
// only tests that want rapid import it.
//
//	rapid.Check(t, func(t *rapid.T) {
//		fake := clock.NewFake()
//		dep := resiliencetest.NewDependency(1, rapidgen.Timeline(fake, time.Minute).Draw(t, "outage"))
//		rs := rapidgen.Retry().Draw(t, "retry")
//		p := retry.New[int](rs.Options(fake)...)
//		...
//	})
//
// Every drawn value prints as a short description under %#v (which rapid
// uses to log draws), such as "timeline(0s healthy, 12s fail, 40s
// delay(fixed(30ms)))" or "retry{Attempts: 3, Backoff: constant(100ms)}", so
// a failing case reads at a glance; rapid shrinks it towards fewer steps,
// earlier times, healthier faults and smaller settings.
//
// Pipelines built on the real clock (clock.Real(), the default, or the time
// package) are property-tested with [CheckInBubble] instead of rapid.Check:
// each run of the property is in a testing/synctest bubble of its own, so
// backoffs, cooldowns and deadlines take bubble time, not real time.
package rapidgen

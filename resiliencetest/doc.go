// Package resiliencetest is a fault kit for testing pipelines: fake
// dependencies that fail, hang, slow down, panic or ask to be retried later,
// as a test scripts them, and that count the calls that reached them.
//
// A [Dependency] is an op with a [Fault] and counters:
//
//	fake := clock.NewFake()
//	dep := resiliencetest.NewDependency("ok", resiliencetest.Timeline(fake,
//		resiliencetest.Step{At: 0, Fault: resiliencetest.Healthy()},
//		resiliencetest.Step{At: 10 * time.Second, Fault: resiliencetest.Fail(nil)},
//		resiliencetest.Step{At: 20 * time.Second, Fault: resiliencetest.Hang()},
//		resiliencetest.Step{At: 30 * time.Second, Fault: resiliencetest.Healthy()},
//	))
//	v, err := pipeline.Do(ctx, dep.Call)
//	calls := dep.Calls()
//
// Faults:
//
//   - [Healthy]: the call succeeds (the zero Fault)
//   - [Fail], [FailRate]: the call fails, always or at a seeded rate
//   - [RetryAfter]: the call fails with a Retry-After hint
//   - [Hang]: the call blocks until its context is done
//   - [Panic]: the call panics
//   - [Delay]: the call waits a latency drawn from a [Latency] ([Fixed],
//     [Uniform], [Exponential]) on a clock
//   - [Sequence], [Timeline], [Chain]: faults by call number, by time, one
//     after the other
//   - [Func]: a fault of your own
//
// Time comes from a clock.Clock: give the faults and the pipeline the same
// clock.Fake, and step both with [Drive], so that a test of backoffs,
// cooldowns and timeouts of minutes runs in microseconds and never sleeps.
// Drive moves the fake only when every goroutine of the pipeline is
// blocked, and then to the earliest deadline, one timer at a time: a driven
// call with the same inputs returns the same outcome at the same virtual
// instant on every run, whatever the goroutine schedule (see [Drive] for
// the rule and its limits).
//
// Random faults and latencies take a seed: a test that calls them in the
// same order gets the same faults. Everything in the package is safe for
// simultaneous use by multiple goroutines.
//
// Generators of faults, timelines and policy settings for property-based
// tests with pgregory.net/rapid are in the module
// github.com/f0b5b96b/resilience/resiliencetest/rapidgen, so that this
// package, like the rest of the core module, depends on the standard library
// only.
package resiliencetest

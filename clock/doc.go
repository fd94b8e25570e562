// Package clock is the source of time for the resilience policies, so that
// tests can control time instead of waiting on the wall clock.
//
// Entry points:
//
//   - [Clock] is the interface policies take: [Clock.Now], [Clock.NewTimer],
//     [Clock.AfterFunc] and [Clock.Sleep]. Timers are returned as [Timer].
//   - [Real] returns the Clock backed by the time package; use it in
//     production.
//   - [NewFake] returns a [Fake], a manual clock for tests. Time stands still
//     until the test calls [Fake.Advance] or [Fake.Set], or fires the next
//     timer alone with [Fake.AdvanceNext]; [Fake.Waiters] and
//     [Fake.BlockUntil] let a test wait until the code under test has armed
//     its timers, without sleeping.
//
// All durations are [time.Duration] values (nanoseconds). All Clock and
// Timer implementations in this package are safe for simultaneous use by
// multiple goroutines.
package clock

// Package backoff provides delay schedules for retrying operations and for
// the growing cooldown of a circuit breaker.
//
// A [Schedule] is the recipe: an immutable value describing how long to wait
// before each retry. Build one with a constructor:
//
//   - [Constant]: the same delay every time.
//   - [Linear]: a delay that grows by a fixed step, up to a cap.
//   - [Exponential]: a delay that grows by a fixed factor, up to a cap.
//
// The zero Schedule is "not set" (a Config field holding it means the
// field's default); Constant(0) is "no wait". A Schedule reads and writes
// itself as JSON ([Schedule.MarshalJSON]), for configuration files. Refine a schedule with
// [Schedule.WithJitter] (randomize the delays; see [Jitter]) and
// [Schedule.WithRand] (choose the random source, for example a seeded one in
// tests). [Schedule.Max] reports the upper bound of every delay, and a Max
// above 0 means real waits: the constructors refuse a schedule that has a
// cap above 0 but could only ever give delays of 0 (Exponential from base 0,
// Linear from base 0 with step 0), so a caller may rely on Max() > 0 to keep
// an unbounded retry loop from spinning.
//
// A [Sequence] is one execution's walk through a schedule: call
// [Schedule.Start] once per execution (one operation and its retries) and
// [Sequence.Next] before each retry. [Schedule.Delays] offers the same walk as
// an iterator for range loops.
//
//	s := backoff.Exponential(100*time.Millisecond, 2, 10*time.Second).WithJitter(backoff.Full)
//	q := s.Start()
//	for err := op(); err != nil; err = op() {
//		time.Sleep(q.Next())
//	}
//
// All delays are [time.Duration] values (nanoseconds). For every input the
// constructors accept and for any number of retries, no delay is negative and
// none exceeds [Schedule.Max]; arithmetic that would overflow saturates at the
// cap instead. The constructors and [Schedule.WithJitter] panic on invalid
// arguments; such panics are programming errors, and their messages name the
// offending option and value.
package backoff

package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A breaker and a retry logging through one Slog at level Debug. The
// breaker opens (Warn), refuses (Debug), half-opens and closes (Info);
// the retry gives up (Warn). Per-call events are rate-limited: at most one
// line a second for each policy and event type, the next line counting
// the ones left out (suppressed), so the second failure of the same
// instant, 13 refusals over 2.4 seconds and the second failed attempt
// make 1, 3 and 0 lines.
func ExampleNewSlog() {
	f := clock.NewFake()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // no time, for the example's output
			}
			return a
		},
	}))
	log := telemetry.NewSlog(logger, &telemetry.SlogOptions{Clock: f})

	b := breaker.New(breaker.WithName("prices"), breaker.WithThreshold(2), breaker.WithCooldown(5*time.Second),
		breaker.WithClock(f), breaker.WithObserver(log))
	b.Record(true)
	b.Record(true) // trips
	for range 13 {
		_, _ = b.Allow() // refused
		f.Advance(200 * time.Millisecond)
	}
	f.Advance(3 * time.Second)
	p, _ := b.Allow() // the cooldown has passed: a trial
	p.Done(nil)

	r := retry.New[int](retry.WithName("get-price"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)),
		retry.WithClock(f), retry.WithObserver(log))
	_, _ = r.Do(context.Background(), func(context.Context) (int, error) {
		return 0, errors.New("503 Service Unavailable")
	})
	// Output:
	// level=DEBUG msg=breaker.failure policy=breaker name=prices
	// level=WARN msg=breaker.opened policy=breaker name=prices wait=5s from=closed to=open
	// level=DEBUG msg=breaker.refused policy=breaker name=prices error="breaker: open (prices), retry after 5s" wait=5s
	// level=DEBUG msg=breaker.refused policy=breaker name=prices error="breaker: open (prices), retry after 4s" wait=4s suppressed=4
	// level=DEBUG msg=breaker.refused policy=breaker name=prices error="breaker: open (prices), retry after 3s" wait=3s suppressed=4
	// level=INFO msg=breaker.half_opened policy=breaker name=prices from=open to=half-open
	// level=INFO msg=breaker.closed policy=breaker name=prices from=half-open to=closed
	// level=DEBUG msg=retry.attempt policy=retry name=get-price attempt=1 error="503 Service Unavailable"
	// level=DEBUG msg=retry.attempt_failed policy=retry name=get-price attempt=1 error="503 Service Unavailable"
	// level=DEBUG msg=retry.waiting policy=retry name=get-price attempt=1 error="503 Service Unavailable"
	// level=WARN msg=retry.gave_up policy=retry name=get-price attempt=2 error="retry: attempts used up"
	// level=DEBUG msg=retry.call policy=retry name=get-price error="retry: gave up after 2 attempts: 503 Service Unavailable"
}

// A Counter counts events per policy and type: what an exporter reads.
func ExampleCounter() {
	var c telemetry.Counter
	b := breaker.New(breaker.WithName("db"), breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()),
		breaker.WithObserver(&c))
	for range 3 {
		if p, err := b.Allow(); err == nil {
			p.Done(nil) // a success: counted by the breaker, no event
		}
	}
	b.Record(true)
	for range 4 {
		_, _ = b.Allow()
	}
	for _, n := range c.Counts() {
		fmt.Println(n.Name, n.Type, n.N)
	}
	fmt.Println("refused:", c.Count("db", breaker.EventRefused))
	// Output:
	// db breaker.failure 1
	// db breaker.opened 1
	// db breaker.refused 4
	// refused: 4
}

// A registry answers "which breakers are open now?".
func ExampleRegistry_OpenBreakers() {
	reg := telemetry.NewRegistry()
	f := clock.NewFake()
	for _, name := range []string{"search", "billing", "images"} {
		b := breaker.New(breaker.WithName(name), breaker.WithThreshold(1), breaker.WithClock(f))
		if err := reg.Register(b); err != nil {
			panic(err)
		}
		if name != "search" {
			b.Record(true) // trips
		}
	}
	for _, s := range reg.OpenBreakers() {
		fmt.Println(s.Name, s.State)
	}
	// Output:
	// billing open
	// images open
}

// Registering a name twice is an error, not a replacement.
func ExampleRegistry_Register() {
	reg := telemetry.NewRegistry()
	fmt.Println(reg.Register(breaker.New(breaker.WithName("db"))))
	err := reg.Register(breaker.New(breaker.WithName("db")))
	fmt.Println(errors.Is(err, telemetry.ErrDuplicate), err)
	fmt.Println(errors.Is(reg.Register(breaker.New()), telemetry.ErrNoName))
	// Output:
	// <nil>
	// true telemetry: name already registered: breaker "db"
	// true
}

// Snapshots enumerates the guards in name order, each in the one shape
// exporters read.
func ExampleRegistry_Snapshots() {
	reg := telemetry.NewRegistry()
	b := breaker.New(breaker.WithName("db"), breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	_ = reg.Register(b)
	b.Record(false)
	b.Record(true)
	_, _ = b.Allow()
	for _, s := range reg.Snapshots() {
		gen, _ := s.Value("generation")
		fmt.Printf("%s %s: %s, generation %v, %d refused\n", s.Kind, s.Name, s.State, gen, s.Refused)
	}
	// Output:
	// breaker db: open, generation 2, 1 refused
}

// Pipelines are registered with their chain.
func ExampleRegistry_RegisterPipeline() {
	reg := telemetry.NewRegistry()
	prices := resilience.Then(
		retry.New[float64](),
		breaker.Policy[float64](breaker.New(breaker.WithName("prices"))),
	)
	_ = reg.RegisterPipeline("prices", prices)
	for _, p := range reg.Pipelines() {
		fmt.Printf("%s: %s\n", p.Name, p.Chain)
	}
	// Output:
	// prices: retry > breaker(prices)
}

// Multi sends events to several observers: a Counter for metrics and a
// function of one's own.
func ExampleMulti() {
	var c telemetry.Counter
	opened := telemetry.ObserverFunc(func(e telemetry.Event) {
		if e.Type == breaker.EventOpened {
			fmt.Printf("%s opened for %v\n", e.Name, e.Wait)
		}
	})
	b := breaker.New(breaker.WithName("db"), breaker.WithThreshold(1), breaker.WithCooldown(time.Minute),
		breaker.WithClock(clock.NewFake()), breaker.WithObserver(telemetry.Multi(&c, opened)))
	b.Record(true)
	fmt.Println(c.Count("db", breaker.EventOpened))
	// Output:
	// db opened for 1m0s
	// 1
}

// Every event type names the kind of policy that emits it.
func ExampleType_Kind() {
	fmt.Println(breaker.EventOpened.Kind(), retry.EventGaveUp.Kind(), ratelimit.EventRefused.Kind())
	// Output: breaker retry ratelimit
}

// The levels a Slog writes at.
func ExampleLevel() {
	for _, t := range []telemetry.Type{breaker.EventOpened, breaker.EventClosed, breaker.EventRefused, retry.EventGaveUp} {
		fmt.Println(t, telemetry.Level(t))
	}
	// Output:
	// breaker.opened WARN
	// breaker.closed INFO
	// breaker.refused DEBUG
	// retry.gave_up WARN
}

package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// 10 events per second, in bursts of up to 3.
func ExampleNew() {
	fake := clock.NewFake()
	l := ratelimit.New(10, 3, ratelimit.WithClock(fake))
	fmt.Println(l.Allow(), l.Allow(), l.Allow(), l.Allow())
	fake.Advance(100 * time.Millisecond) // one token back
	fmt.Println(l.Allow(), l.Allow())
	// Output:
	// true true true false
	// true false
}

// One event every 250ms.
func ExampleEvery() {
	fmt.Println(ratelimit.Every(250 * time.Millisecond))
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(250*time.Millisecond), 1, ratelimit.WithClock(fake))
	fmt.Println(l.Allow(), l.Allow())
	fake.Advance(250 * time.Millisecond)
	fmt.Println(l.Allow())
	// Output:
	// 4
	// true false
	// true
}

func ExampleLimiter_Allow() {
	// A fake clock keeps the example exact; a service uses the real one.
	l := ratelimit.New(1, 1, ratelimit.WithClock(clock.NewFake())) // one request per second
	handle := func() string {
		if !l.Allow() {
			return "429 Too Many Requests"
		}
		return "200 OK"
	}
	fmt.Println(handle())
	fmt.Println(handle())
	// Output:
	// 200 OK
	// 429 Too Many Requests
}

// AllowN takes several tokens at once, all or none: here, bytes.
func ExampleLimiter_AllowN() {
	fake := clock.NewFake()
	l := ratelimit.New(1e6, 64_000, ratelimit.WithClock(fake)) // 1 MB/s, bursts of 64 kB
	fmt.Println(l.AllowN(48_000), l.AllowN(32_000), l.AllowN(16_000))
	fake.Advance(32 * time.Millisecond) // 32 kB back
	fmt.Println(l.AllowN(32_000))
	// Output:
	// true false true
	// true
}

// Wait waits for a token when the wait fits the deadline, and fails at
// once, without waiting, when it does not.
func ExampleLimiter_Wait() {
	l := ratelimit.New(ratelimit.Every(time.Minute), 1, ratelimit.WithName("api"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(l.Wait(ctx)) // the bucket starts full

	err := l.Wait(ctx) // the next token is a minute away, past the deadline
	fmt.Println(errors.Is(err, ratelimit.ErrLimited))
	d, _ := resilience.RetryAfter(err)
	fmt.Println(d > 59*time.Second)
	// Output:
	// <nil>
	// true
	// true
}

// WaitN waits for several tokens at once.
func ExampleLimiter_WaitN() {
	l := ratelimit.New(1e6, 1000)
	fmt.Println(l.WaitN(context.Background(), 1000))
	err := l.WaitN(context.Background(), 1001) // never possible: no wait
	fmt.Println(err, errors.Is(err, ratelimit.ErrExceedsBurst))
	// Output:
	// <nil>
	// ratelimit: events exceed the burst: 1001 asked, burst 1000 true
}

// The policy refuses at once when there is no token, and says when to
// come back.
func ExamplePolicy() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithName("geo"))
	p := ratelimit.Policy[string](l)
	lookup := func(context.Context) (string, error) { return "Paris", nil }

	fmt.Println(p.Do(context.Background(), lookup))
	fake.Advance(400 * time.Millisecond)
	fmt.Println(p.Do(context.Background(), lookup))
	// Output:
	// Paris <nil>
	//  ratelimit: limited (geo), retry after 600ms
}

// The wait policy smooths a burst out instead, within MaxWait.
func ExampleWaitPolicy() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithMaxWait(5*time.Second))
	p := ratelimit.WaitPolicy[int](l)
	fmt.Println(p)

	results := make(chan int)
	for i := range 2 {
		go func() {
			v, _ := p.Do(ctx, func(context.Context) (int, error) { return i, nil })
			results <- v
		}()
	}
	first := <-results          // one call passes at once...
	_ = fake.BlockUntil(ctx, 1) // ...the other waits for its token
	fake.Advance(time.Second)
	fmt.Println(first+<-results == 1)
	// Output:
	// ratelimit
	// true
}

// One bucket per client, for at most MaxKeys clients.
func ExampleNewKeyed() {
	perClient := ratelimit.NewKeyed[string](1, 2, ratelimit.WithMaxKeys(10_000), ratelimit.WithClock(clock.NewFake()))
	for _, client := range []string{"10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2"} {
		fmt.Println(client, perClient.Allow(client))
	}
	fmt.Println(perClient.Len(), "clients tracked")
	// Output:
	// 10.0.0.1 true
	// 10.0.0.1 true
	// 10.0.0.1 false
	// 10.0.0.2 true
	// 2 clients tracked
}

// Limiter gives a key's bucket for any Limiter method, here a Retry-After
// hint for a 429 response.
func ExampleKeyed_Limiter() {
	fake := clock.NewFake()
	perUser := ratelimit.NewKeyed[int](ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	ctx := context.Background()
	op := func(context.Context) (struct{}, error) { return struct{}{}, nil }
	for range 2 {
		_, err := ratelimit.Policy[struct{}](perUser.Limiter(42)).Do(ctx, op)
		if d, ok := resilience.RetryAfter(err); ok {
			fmt.Printf("429, Retry-After: %.0fs\n", d.Seconds())
		} else {
			fmt.Println("200")
		}
	}
	// Output:
	// 200
	// 429, Retry-After: 1s
}

func ExampleKeyed_Allow() {
	k := ratelimit.NewKeyed[string](resilience.Off, 1) // one event per key, ever
	fmt.Println(k.Allow("a"), k.Allow("a"), k.Allow("b"))
	// Output: true false true
}

func ExampleKeyed_Len() {
	k := ratelimit.NewKeyed[int](10, 1, ratelimit.WithMaxKeys(2))
	for key := range 5 {
		k.Allow(key)
	}
	fmt.Println(k.Len())
	// Output: 2
}

// A configuration read at run time is checked with Validate before use.
func ExampleConfig_Validate() {
	c := ratelimit.Config{Rate: -5, Burst: 10}
	fmt.Println(c.Validate())
	c.Rate = 50
	fmt.Println(c.Validate())
	// Output:
	// ratelimit: Rate must be >= 0 events per second, or Off (no refill), got -5
	// <nil>
}

// A service reads its limiters' settings from a JSON file, checks them, and
// builds each limiter with its own defaults in code: what the file leaves
// out (the export limiter's rate, the per-client burst) keeps the value
// given to New.
func ExampleConfig_json() {
	data, err := os.ReadFile("testdata/config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var file struct{ Search, Export, PerClient ratelimit.Config }
	if err := json.Unmarshal(data, &file); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []ratelimit.Config{file.Search, file.Export, file.PerClient} {
		if err := c.Validate(); err != nil {
			fmt.Println(err)
			return
		}
	}
	fake := clock.NewFake() // keeps the example exact; a service uses the real clock
	search := ratelimit.New(100, 1, ratelimit.WithClock(fake), ratelimit.WithConfig(file.Search))
	export := ratelimit.New(ratelimit.Every(time.Hour), 1, ratelimit.WithClock(fake), ratelimit.WithConfig(file.Export))
	perClient := ratelimit.NewKeyed[string](1, 3, ratelimit.WithClock(fake), ratelimit.WithConfig(file.PerClient))

	fmt.Println(search.AllowN(10), search.Allow()) // the file's burst of 10
	fake.Advance(20 * time.Millisecond)            // the file's 50 a second: one back
	fmt.Println(search.Allow())
	fmt.Println(export.AllowN(2), export.Allow()) // the file's burst, New's rate
	fmt.Println(perClient.Limiter("10.0.0.1").AllowN(3))

	out, _ := json.Marshal(file.Search)
	fmt.Println(string(out))
	// Output:
	// true false
	// true
	// true false
	// true
	// {"Rate":50,"Burst":10,"MaxWait":"200ms"}
}

// A refusal says which limiter refused and when to come back.
func Example_refusal() {
	l := ratelimit.New(ratelimit.Every(time.Hour), 1, ratelimit.WithName("export"))
	_ = l.Allow()
	_, err := ratelimit.Policy[int](l).Do(context.Background(), func(context.Context) (int, error) { return 0, nil })
	var re *resilience.RefusedError
	if errors.As(err, &re) {
		fmt.Println("refused by", re.Name(), "for about", re.RetryAfter().Round(time.Hour))
	}
	// Output: refused by export for about 1h0m0s
}

// The bucket refills as its clock says: on a fake clock, a token comes
// back only when the fake time has moved on by 1/Rate.
func ExampleWithClock() {
	fake := clock.NewFake()
	l := ratelimit.New(10, 1, ratelimit.WithClock(fake)) // a token every 100ms
	fmt.Println(l.Allow(), l.Allow())
	fake.Advance(99 * time.Millisecond)
	fmt.Println(l.Allow())
	fake.Advance(time.Millisecond)
	fmt.Println(l.Allow())
	// Output:
	// true false
	// false
	// true
}

// WithConfig sets the Config's non-zero fields only: New's rate and burst,
// the options before it and the defaults stay unless the Config sets them,
// and options after it change single fields again.
func ExampleWithConfig() {
	fake := clock.NewFake()
	l := ratelimit.New(100, 2, ratelimit.WithClock(fake),
		ratelimit.WithConfig(ratelimit.Config{Name: "search"}), ratelimit.WithName("search-eu"))
	fmt.Println(l.Allow(), l.Allow()) // New's burst of 2
	_, err := ratelimit.Policy[int](l).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	fmt.Println(err) // New's rate of 100 a second, the later option's name

	// Rate Off switches the refill off; a Config's 0 would mean New's rate.
	quota := ratelimit.New(100, 2, ratelimit.WithConfig(ratelimit.Config{Rate: resilience.Off}))
	fmt.Println(quota.AllowN(2), ratelimit.Policy[int](quota))
	_, err = ratelimit.Policy[int](quota).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	fmt.Println(err)
	// Output:
	// true true
	// ratelimit: limited (search-eu), retry after 10ms
	// true ratelimit
	// ratelimit: limited, retry never
}

// A Keyed tracks at most MaxKeys keys: the least recently used is
// forgotten, and its bucket starts full if it comes back.
func ExampleWithMaxKeys() {
	k := ratelimit.NewKeyed[string](resilience.Off, 1, ratelimit.WithMaxKeys(2)) // one event per key while tracked
	fmt.Println(k.Allow("a"), k.Allow("a"))
	k.Allow("b")
	k.Allow("c") // "a" is forgotten
	fmt.Println(k.Len(), k.Allow("a"))
	// Output:
	// true false
	// 2 true
}

// Wait waits for a token at most MaxWait; when the token is further away,
// it fails at once, without waiting.
func ExampleWithMaxWait() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(2*time.Second), 1, ratelimit.WithMaxWait(time.Second), ratelimit.WithClock(fake))
	fmt.Println(l.Wait(ctx)) // the bucket starts full
	fmt.Println(l.Wait(ctx)) // the next token is 2s away

	fake.Advance(time.Second)
	go func() {
		_ = fake.BlockUntil(ctx, 1) // the caller below waits...
		fake.Advance(time.Second)   // ...for the token, now 1s away
	}()
	fmt.Println(l.Wait(ctx))
	// Output:
	// <nil>
	// ratelimit: limited, retry after 2s
	// <nil>
}

// The name appears in the policy layer's name and in refusals.
func ExampleWithName() {
	for _, l := range []*ratelimit.Limiter{ratelimit.New(resilience.Off, 1), ratelimit.New(resilience.Off, 1, ratelimit.WithName("export"))} {
		p := ratelimit.Policy[int](l)
		op := func(context.Context) (int, error) { return 1, nil }
		_, _ = p.Do(context.Background(), op)
		_, err := p.Do(context.Background(), op)
		fmt.Printf("%v: %v\n", p, err)
	}
	// Output:
	// ratelimit: ratelimit: limited, retry never
	// ratelimit(export): ratelimit: limited (export), retry never
}

// RetryAfter says when the same call would pass; resilience.RetryAfter
// finds it through wrapping, for example for a Retry-After header.
func Example_refusalRetryAfter() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	_ = l.Allow()
	fake.Advance(250 * time.Millisecond)
	_, err := ratelimit.Policy[int](l).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	err = fmt.Errorf("geocode: %w", err)

	var re *resilience.RefusedError
	if errors.As(err, &re) {
		fmt.Println(re.RetryAfter())
	}
	d, ok := resilience.RetryAfter(err)
	fmt.Println(d, ok)
	// Output:
	// 750ms
	// 750ms true
}

// SetRate retunes a running limiter, as a dependency that announces a new
// quota asks: the tokens in the bucket stay, and refill at the new rate
// from the change on.
func ExampleLimiter_SetRate() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake))
	l.AllowN(2)
	fake.Advance(500 * time.Millisecond)
	fmt.Println(l.Tokens()) // half a token, at 1 per second

	l.SetRate(10) // the half token stays; the other half comes in 50ms
	fake.Advance(50 * time.Millisecond)
	fmt.Println(l.Tokens(), l.Allow(), l.Rate())
	// Output:
	// 0.5
	// 1 true 10
}

// SetBurst keeps the tokens up to the new burst.
func ExampleLimiter_SetBurst() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 10, ratelimit.WithClock(fake))
	l.SetBurst(3) // 10 tokens: 3 stay
	fmt.Println(l.Tokens(), l.Burst())
	l.SetBurst(5) // raised: no token is added, the bucket fills up to 5
	fmt.Println(l.Tokens())
	fake.Advance(time.Hour)
	fmt.Println(l.Tokens())
	// Output:
	// 3 3
	// 3
	// 5
}

// Tokens reads the bucket, for metrics or for a decision that may be
// stale: negative while callers have taken tokens ahead.
func ExampleLimiter_Tokens() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithClock(fake))
	fmt.Println(l.Tokens())
	l.AllowN(2)
	fake.Advance(250 * time.Millisecond)
	fmt.Println(l.Tokens())
	l.ReserveN(3) // 1.25 there, 1.75 taken ahead
	fmt.Println(l.Tokens())
	// Output:
	// 3
	// 1.25
	// -1.75
}

func ExampleLimiter_Rate() {
	l := ratelimit.New(ratelimit.Every(100*time.Millisecond), 1)
	fmt.Println(l.Rate())
	l.SetRate(resilience.Off) // no refill
	fmt.Println(l.Rate())
	// Output:
	// 10
	// 0
}

func ExampleLimiter_Burst() {
	l := ratelimit.New(10, 5)
	l.SetBurst(20)
	fmt.Println(l.Burst())
	// Output: 20
}

// Reserve takes a token now and says when to use it; the holder that will
// not wait that long gives it back.
func ExampleLimiter_Reserve() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	for range 3 {
		r := l.Reserve()
		if d := r.Delay(); d > 1500*time.Millisecond {
			r.Cancel() // too long: the token goes back
			fmt.Println("gave up a wait of", d)
			continue
		}
		fmt.Println("act in", r.Delay())
	}
	// Output:
	// act in 0s
	// act in 1s
	// gave up a wait of 2s
}

// ReserveN takes several tokens ahead; it is not OK when the burst could
// never hold them.
func ExampleLimiter_ReserveN() {
	fake := clock.NewFake()
	l := ratelimit.New(1000, 500, ratelimit.WithClock(fake)) // 1000 bytes per second, bursts of 500
	fmt.Println(l.ReserveN(400).Delay())                     // there now
	r := l.ReserveN(400)
	fmt.Println(r.OK(), r.Delay()) // 100 there, 300 more in 300ms
	big := l.ReserveN(501)
	fmt.Println(big.OK(), big.Delay() == resilience.Never)
	// Output:
	// 0s
	// true 300ms
	// false true
}

func ExampleReservation_OK() {
	l := ratelimit.New(10, 2)
	fmt.Println(l.ReserveN(2).OK(), l.ReserveN(3).OK())
	// Output: true false
}

// Delay counts down on the limiter's clock.
func ExampleReservation_Delay() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	l.Allow()
	r := l.Reserve()
	fmt.Println(r.Delay())
	fake.Advance(400 * time.Millisecond)
	fmt.Println(r.Delay())
	fake.Advance(time.Second)
	fmt.Println(r.Delay())
	// Output:
	// 1s
	// 600ms
	// 0s
}

// Cancel gives the tokens back, less those that later reservations took
// ahead: their times were reckoned with these tokens gone.
func ExampleReservation_Cancel() {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithClock(fake))
	r := l.ReserveN(3)
	r.Cancel() // nothing behind it: all 3 come back
	fmt.Println(l.Tokens())

	l.ReserveN(3)
	r = l.ReserveN(2) // due in 2s
	l.ReserveN(1)     // behind it, due in 3s
	r.Cancel()        // 2 less the 1 behind
	fmt.Println(l.Tokens())
	// Output:
	// 3
	// -2
}

// Keyed.SetRate retunes every key at once: each keeps its tokens.
func ExampleKeyed_SetRate() {
	fake := clock.NewFake()
	perClient := ratelimit.NewKeyed[string](ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake))
	perClient.Allow("a")
	perClient.SetRate(ratelimit.Every(100 * time.Millisecond))
	fake.Advance(100 * time.Millisecond)
	fmt.Println(perClient.Allow("a"), perClient.Limiter("b").Rate())
	// Output: true 10
}

func ExampleKeyed_SetBurst() {
	perClient := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(clock.NewFake()))
	perClient.SetBurst(3)
	fmt.Println(perClient.Limiter("new").Tokens(), perClient.Limiter("new").AllowN(3))
	// Output: 3 true
}

// An observer sees each refusal; a telemetry.Counter counts them per
// limiter name.
func ExampleWithObserver() {
	events := telemetry.NewCounter()
	l := ratelimit.New(1, 2, ratelimit.WithName("api"), ratelimit.WithObserver(events))
	fmt.Println(l.Allow(), l.Allow(), l.Allow())
	fmt.Println(events.Count("api", ratelimit.EventRefused))
	// Output:
	// true true false
	// 1
}

// Stats reports the rate, the burst, the tokens left and the refusals
// since New.
func ExampleLimiter_Stats() {
	l := ratelimit.New(10, 3, ratelimit.WithClock(clock.NewFake()), ratelimit.WithName("api"))
	_ = l.AllowN(3)
	_ = l.Allow() // refused
	fmt.Printf("%+v\n", l.Stats())
	s := l.Snapshot()
	fmt.Println(s.Kind, s.Name, s.Refused)
	// Output:
	// {Rate:10 Burst:3 Tokens:0 Refused:1}
	// ratelimit api 1
}

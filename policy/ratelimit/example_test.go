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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
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
	k := ratelimit.NewKeyed[string](0, 1) // one event per key, ever
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
	k := ratelimit.NewKeyed[string](0, 1, ratelimit.WithMaxKeys(2)) // one event per key while tracked
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
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
	for _, l := range []*ratelimit.Limiter{ratelimit.New(0, 1), ratelimit.New(0, 1, ratelimit.WithName("export"))} {
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

package resilienceredis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceredis"
	"github.com/redis/go-redis/v9"
)

// The examples run against the tests' server; a prefix of their own keeps
// runs apart.
var prefix = "example:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"

func addr() string { return os.Getenv("RESILIENCE_REDIS_ADDR") }

func ExampleNewLimiter() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	// 10 events per minute, bursts of 2, for the whole fleet.
	l := resilienceredis.NewLimiter(rdb, "reports", 10.0/60, 2, resilienceredis.WithPrefix(prefix))
	ctx := context.Background()
	fmt.Println(l.Allow(ctx), l.Allow(ctx), l.Allow(ctx))
	// Output: true true false
}

func ExampleLimiterPolicy() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	l := resilienceredis.NewLimiter(rdb, "search", 1.0/60, 1, resilienceredis.WithPrefix(prefix))
	p := resilienceredis.LimiterPolicy[string](l)
	search := func(ctx context.Context) (string, error) { return "results", nil }
	for range 2 {
		v, err := p.Do(context.Background(), search)
		var re *resilience.RefusedError
		if errors.As(err, &re) {
			fmt.Println(p, "refused:", re.Reason(), "- retry within a minute:", re.RetryAfter() <= time.Minute)
			continue
		}
		fmt.Println(v)
	}
	// Output:
	// results
	// ratelimit(search) refused: ratelimit: limited - retry within a minute: true
}

func ExampleNewKeyedLimiter() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	// One bucket per tenant, shared by the fleet.
	k := resilienceredis.NewKeyedLimiter(rdb, "tenants", 1, 1, resilienceredis.WithPrefix(prefix))
	ctx := context.Background()
	fmt.Println(k.Allow(ctx, "acme"), k.Allow(ctx, "acme"), k.Allow(ctx, "globex"))
	// Output: true false true
}

func ExampleNewBreaker() {
	// Two instances of one service, each with its own client.
	var fleet []*resilienceredis.Breaker
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Addr: addr()})
		defer rdb.Close()
		b := resilienceredis.NewBreaker(rdb, "payments", resilienceredis.WithPrefix(prefix),
			resilienceredis.WithThreshold(2), resilienceredis.WithCooldown(time.Minute))
		defer b.Close()
		fleet = append(fleet, b)
	}
	// One failure on each instance: two consecutive failures, fleet-wide.
	for _, b := range fleet {
		p, err := b.Allow()
		if err == nil {
			p.Done(errors.New("payments: 503"))
		}
	}
	// Within FlushInterval (50ms) the batches reach Redis; the trip comes
	// back by pub/sub.
	deadline := time.Now().Add(5 * time.Second)
	for (fleet[0].State() != breaker.Open || fleet[1].State() != breaker.Open) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for i, b := range fleet {
		_, err := b.Allow()
		fmt.Printf("instance %d: %v, %v\n", i, b.State(), errors.Is(err, breaker.ErrOpen))
	}
	// Output:
	// instance 0: open, true
	// instance 1: open, true
}

func ExampleBreakerPolicy() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	b := resilienceredis.NewBreaker(rdb, "inventory", resilienceredis.WithPrefix(prefix))
	defer b.Close()
	p := resilienceredis.BreakerPolicy[int](b)
	n, err := p.Do(context.Background(), func(ctx context.Context) (int, error) { return 42, nil })
	fmt.Println(p, n, err)
	// Output: breaker(inventory) 42 <nil>
}

func ExampleBreakerConfig_json() {
	var c resilienceredis.BreakerConfig
	err := json.Unmarshal([]byte(`{"Name": "payments", "Threshold": 10, "Cooldown": "15s", "MaxTrials": 3, "Timeout": "20ms"}`), &c)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	b := resilienceredis.NewBreaker(rdb, c.Name, resilienceredis.WithBreakerConfig(c), resilienceredis.WithPrefix(prefix))
	defer b.Close()
	out, _ := json.Marshal(c)
	fmt.Println(b.Name(), string(out))
	// Output: payments {"Name":"payments","Threshold":10,"Cooldown":"15s","MaxTrials":3,"Timeout":"20ms"}
}

func ExampleLimiter_Wait() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	// 20 per second, one at a time: a second call waits about 50ms for
	// its token, which it reserves in Redis at once.
	l := resilienceredis.NewLimiter(rdb, "exports", 20, 1, resilienceredis.WithPrefix(prefix))
	ctx := context.Background()
	fmt.Println(l.Wait(ctx), l.Wait(ctx))
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	err := l.Wait(short) // the next token is too far for this deadline
	fmt.Println(errors.Is(err, ratelimit.ErrLimited) || errors.Is(err, context.DeadlineExceeded))
	// Output:
	// <nil> <nil>
	// true
}

func ExampleWaitPolicy() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	l := resilienceredis.NewLimiter(rdb, "mailer", 100, 1, resilienceredis.WithPrefix(prefix))
	p := resilienceredis.WaitPolicy[int](l)
	sent := 0
	for range 3 { // the calls are spaced 10ms apart, fleet-wide
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { sent++; return sent, nil }); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(p, sent)
	// Output: ratelimit(mailer) 3
}

func ExampleKeyedLimiter_Limiter() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	k := resilienceredis.NewKeyedLimiter(rdb, "uploads", 1, 3, resilienceredis.WithPrefix(prefix))
	acme := k.Limiter("acme") // one tenant's bucket, for one request or many
	ctx := context.Background()
	fmt.Println(acme.AllowN(ctx, 2), acme.AllowN(ctx, 2), acme.AllowN(ctx, 1))
	// Output: true false true
}

func ExampleBreaker_Allow() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	b := resilienceredis.NewBreaker(rdb, "ledger", resilienceredis.WithPrefix(prefix))
	defer b.Close()
	p, err := b.Allow()
	if err != nil {
		fmt.Println("refused:", err) // the dependency was not called
		return
	}
	err = errors.New("ledger: timeout") // the call's outcome
	p.Done(err)
	fmt.Println(b.Name(), b.State())
	// Output: ledger closed
}

func ExampleBreaker_Reset() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	b := resilienceredis.NewBreaker(rdb, "search", resilienceredis.WithPrefix(prefix),
		resilienceredis.WithThreshold(1), resilienceredis.WithCooldown(time.Hour),
		resilienceredis.WithTimeout(time.Second)) // Reset waits for Redis's answer at most this long
	defer b.Close()
	p, _ := b.Allow()
	p.Done(errors.New("search: 500"))
	deadline := time.Now().Add(5 * time.Second)
	for b.State() != breaker.Open && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the batch reaches Redis, the trip comes back
	}
	fmt.Println(b.State())
	// Close the breaker fleet-wide, e.g. once an operator has fixed the
	// dependency.
	fmt.Println(b.Reset(context.Background()), b.State())
	// Output:
	// open
	// <nil> closed
}

func ExampleLimiterConfig_json() {
	var c resilienceredis.LimiterConfig
	err := json.Unmarshal([]byte(`{"Name": "api", "Rate": 50, "Burst": 100, "Timeout": "20ms", "FallbackRate": 10}`), &c)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	l := resilienceredis.NewLimiter(rdb, c.Name, c.Rate, c.Burst, resilienceredis.WithLimiterConfig(c), resilienceredis.WithPrefix(prefix))
	fmt.Println(l.Name(), l.Allow(context.Background()))
	// Output: api true
}

// Two caches (two instances of a service) share their entries through one
// store on Redis: the second finds the value the first loaded.
func ExampleNewCacheStore() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	type user struct{ Name string }
	store := resilienceredis.NewCacheStore[user](rdb, "users", resilienceredis.JSONCodec[user](),
		resilienceredis.WithCachePrefix(prefix))
	a := cache.New[user](time.Minute, cache.WithStore[user](store))
	b := cache.New[user](time.Minute, cache.WithStore[user](store))
	loads := 0
	fetch := func(ctx context.Context) (user, error) { loads++; return user{"Ada"}, nil }
	ctx := cache.Key(context.Background(), "user:1")
	u1, _ := a.Policy().Do(ctx, fetch)
	u2, _ := b.Policy().Do(ctx, fetch)
	fmt.Println(u1.Name, u2.Name, "loads:", loads)
	// Output: Ada Ada loads: 1
}

func ExampleLimiter_AllowAtMost() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	// A batch job sends what the fleet's bucket allows, up to 5 at a time.
	l := resilienceredis.NewLimiter(rdb, "emails", 1.0/60, 3, resilienceredis.WithPrefix(prefix))
	ctx := context.Background()
	n, err := l.AllowAtMost(ctx, 5)
	fmt.Println(n, err)
	n, err = l.AllowAtMost(ctx, 5)
	fmt.Println(n, errors.Is(err, ratelimit.ErrLimited))
	// Output:
	// 3 <nil>
	// 0 true
}

func ExampleNewRetryBudget() {
	rdb := redis.NewClient(&redis.Options{Addr: addr()})
	defer rdb.Close()
	// The fleet's retries of the payments API are at most a tenth of its
	// calls, and each instance may always retry once a second.
	budget := resilienceredis.NewRetryBudget(rdb, "payments",
		resilienceredis.WithPrefix(prefix),
		resilienceredis.WithRatio(0.1),
		resilienceredis.WithMinPerSecond(1))
	defer budget.Close()
	p := retry.New[string](retry.WithAttempts(3), retry.WithBudget(budget),
		retry.WithBackoff(backoff.Constant(time.Millisecond)))
	calls := 0
	v, err := p.Do(context.Background(), func(ctx context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("payments: 503")
		}
		return "paid", nil
	})
	fmt.Println(v, err, calls)
	// Output: paid <nil> 2
}

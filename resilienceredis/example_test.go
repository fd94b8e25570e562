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
	"github.com/f0b5b96b/resilience/policy/breaker"
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

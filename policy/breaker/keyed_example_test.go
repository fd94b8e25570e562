package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// One breaker per host, made on first use from one configuration: a host
// that fails is cut off, the others are not. Transitions say the key.
func ExampleKeyed() {
	k := breaker.NewKeyed[string](breaker.WithName("upstream"), breaker.WithThreshold(2),
		breaker.WithClock(clock.NewFake()),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			fmt.Printf("%s[%s]: %v -> %v\n", tr.Name, tr.Key, tr.From, tr.To)
		}))
	for range 2 {
		report(k.Breaker("a.example"), errUnavailable)
		report(k.Breaker("b.example"), nil)
	}
	_, err := k.Breaker("a.example").Allow()
	fmt.Println(err)
	_, err = k.Breaker("b.example").Allow()
	fmt.Println(err)
	fmt.Println(k.Len(), "keys")
	// Output:
	// upstream[a.example]: closed -> open
	// breaker: open (upstream), retry after 30s
	// <nil>
	// 2 keys
}

type userKey struct{}

// KeyedPolicy picks the key of each call from its context.
func ExampleKeyedPolicy() {
	k := breaker.NewKeyed[string](breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	p := breaker.KeyedPolicy[string](k, func(ctx context.Context) string {
		user, _ := ctx.Value(userKey{}).(string)
		return user
	})
	call := func(user string, err error) {
		ctx := context.WithValue(context.Background(), userKey{}, user)
		v, err := p.Do(ctx, func(context.Context) (string, error) { return "hello " + user, err })
		fmt.Printf("%s: %q %v\n", user, v, err)
	}
	call("ann", errors.New("tenant database down"))
	call("ann", nil)
	call("bob", nil)
	// Output:
	// ann: "hello ann" tenant database down
	// ann: "" breaker: open, retry after 30s
	// bob: "hello bob" <nil>
}

// At most MaxKeys keys are tracked. To make room, a Keyed forgets the least
// recently used closed breaker; only when none is closed does it forget an
// open one, and then it reports it.
func ExampleWithMaxKeys() {
	k := breaker.NewKeyed[string](breaker.WithMaxKeys(2), breaker.WithThreshold(1),
		breaker.WithClock(clock.NewFake()),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type == breaker.EventEvicted {
				fmt.Printf("%s: %s was %s\n", e.Type, e.Key, e.From)
			}
		})))
	k.Breaker("a").Record(true) // a opens
	k.Breaker("b")
	k.Breaker("c") // forgets b, closed, although a was used less recently
	k.Breaker("c").Record(true)
	k.Breaker("d") // a and c are open: forgets a, and says so
	fmt.Printf("%+v\n", k.Stats())
	// Output:
	// breaker.evicted: a was open
	// {Keys:2 MaxKeys:2 Evicted:2 EvictedNotClosed:1}
}

// All lists the tracked keys, the breakers that are not closed first:
// "which hosts are cut off?"
func ExampleKeyed_All() {
	k := breaker.NewKeyed[string](breaker.WithThreshold(1), breaker.WithClock(clock.NewFake()))
	k.Breaker("a")
	k.Breaker("b").Record(true)
	k.Breaker("c")
	for key, b := range k.All() {
		fmt.Println(key, b.State())
	}
	// Output:
	// b open
	// c closed
	// a closed
}

// Stats counts the keys tracked and forgotten.
func ExampleKeyed_Stats() {
	k := breaker.NewKeyed[int](breaker.WithMaxKeys(100))
	for key := range 150 {
		k.Breaker(key)
	}
	s := k.Stats()
	fmt.Println(s.Keys, s.MaxKeys, s.Evicted, s.EvictedNotClosed)
	// Output: 100 100 50 0
}

// Breaker returns a key's breaker, for the two-step form or a Policy.
func ExampleKeyed_Breaker() {
	k := breaker.NewKeyed[string]()
	b := k.Breaker("db-primary")
	p, err := b.Allow()
	if err == nil {
		p.Done(nil)
	}
	fmt.Println(b.Stats().Key, b.Counts().Successes)
	// Output: db-primary 1
}

// NewKeyed takes the options of New, and MaxKeys, which a Config (from a
// JSON file, say) can carry too.
func ExampleNewKeyed() {
	var c breaker.Config
	if err := json.Unmarshal([]byte(`{"Name":"tenants","Threshold":3,"MaxKeys":1000}`), &c); err != nil {
		fmt.Println(err)
		return
	}
	k := breaker.NewKeyed[int](breaker.WithConfig(c))
	for tenant := range 1500 {
		k.Breaker(tenant)
	}
	b := k.Breaker(7)
	fmt.Println(b.Name(), k.Stats().Keys, b.Stats().Key)
	// Output: tenants 1000 7
}

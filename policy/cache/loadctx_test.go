package cache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// LoadTimeout bounds a load at its value: 30s by default, 1ns when set so,
// no bound with resilience.Off.
func TestLoadTimeoutDefaultSmallestAndOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []cache.Option
		want time.Duration // 0: never canceled
	}{
		{"default", nil, cache.DefaultLoadTimeout},
		{"1ns", []cache.Option{cache.WithLoadTimeout(1)}, 1},
		{"off", []cache.Option{cache.WithLoadTimeout(resilience.Off)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testwait.Bubble(t, func(t *testing.T) {
				clk := clock.NewFake()
				c := cache.New[string](time.Minute, append([]cache.Option{cache.WithClock(clk)}, tc.opts...)...)
				release := make(chan struct{})
				op := func(ctx context.Context) (string, error) {
					select {
					case <-ctx.Done():
						return "", ctx.Err()
					case <-release:
						return "v", nil
					}
				}
				errs := make(chan error, 1)
				go func() { _, err := c.Policy().Do(cache.Key(context.Background(), "k"), op); errs <- err }()
				synctest.Wait()
				if tc.want == 0 {
					clk.Advance(1000 * time.Hour)
					synctest.Wait()
					close(release)
					if err := <-errs; err != nil {
						t.Fatalf("a load without a bound ended with %v", err)
					}
					return
				}
				clk.Advance(tc.want - 1)
				synctest.Wait()
				select {
				case err := <-errs:
					t.Fatalf("the load ended before %v: %v", tc.want, err)
				default:
				}
				clk.Advance(1)
				if err := <-errs; !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want the load canceled at %v", err, tc.want)
				}
				close(release)
			})
		})
	}
}

// The context of a load ends when the load returns: what the dependency
// started under it is released.
func TestLoadContextEndsWithTheLoad(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithLoadTimeout(resilience.Off))
		var loadCtx context.Context
		wantDo(t, c.Policy(), "k", func(ctx context.Context) (string, error) { loadCtx = ctx; return "v", nil }, "v", nil)
		if loadCtx.Err() == nil {
			t.Fatal("the load's context is still alive after the load returned")
		}
	})
}

// A call's Info is written by the cache it called, not by a cache below it
// in the load's pipeline, which writes its own, and never after the call
// returned.
func TestInfoIsNotWrittenByTheCacheBelow(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		upper := cache.New[string](time.Minute)
		lower := cache.New[string](time.Minute)
		// lower holds k: a load of upper through it is a hit of lower.
		wantDo(t, lower.Policy(), "k", func(context.Context) (string, error) { return "v", nil }, "v", nil)
		release := make(chan struct{})
		gate := resilience.New("gate", func(ctx context.Context, next resilience.Next[string]) (string, error) {
			<-release
			return next.Call(ctx)
		})
		p := upper.Policy().Then(gate, lower.Policy())
		ctx, cancel := context.WithCancel(cache.Key(context.Background(), "k"))
		ctx, info := cache.WithInfo(ctx)
		errs := make(chan error, 1)
		go func() {
			_, err := p.Do(ctx, func(context.Context) (string, error) { return "loaded", nil })
			errs <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		close(release)
		synctest.Wait()
		if diff := cmp.Diff(cache.Info{Outcome: cache.Miss}, *info); diff != "" {
			t.Fatalf("Info after the call returned mismatch (-want +got):\n%s", diff)
		}
		if s := lower.Stats(); s.Hits != 1 {
			t.Fatalf("lower stats %+v: the load should have hit it", s)
		}
	})
}

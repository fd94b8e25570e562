package cache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// Without StaleIfError, a caller whose load failed gets the load's error,
// even if another load stored a value meanwhile.
func TestFailedLoadWithoutStaleIfErrorReturnsItsError(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Second)
		p := c.Policy()
		release := make(chan struct{})
		errs := make(chan error, 1)
		go func() {
			_, err := p.Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { <-release; return "", errDown })
			errs <- err
		}()
		synctest.Wait()
		c.Invalidate(context.Background(), "k")
		wantDo(t, p, "k", func(context.Context) (string, error) { return "new", nil }, "new", nil)
		synctest.Wait()
		close(release)
		if err := <-errs; !errors.Is(err, errDown) {
			t.Fatalf("got %v, want the load's own error", err)
		}
	})
}

// valueStore keeps values only: it drops the negative entries it is given,
// as a store that cannot hold errors would.
type valueStore struct{ mapStore }

func (s *valueStore) Set(ctx context.Context, k string, e cache.Entry[string]) {
	if e.Err == nil {
		s.mapStore.Set(ctx, k, e)
	}
}

// An error that NegativeIf accepts is returned as is: StaleIfError does
// not replace it with a stale value, even one the Store still holds.
func TestNegativeErrorIsNotReplacedByAStaleValue(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		errNotFound := errors.New("not found")
		st := &valueStore{mapStore{m: map[string]cache.Entry[string]{}}}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStore[string](st), cache.WithStaleIfError(time.Hour),
			cache.WithNegativeTTL(time.Minute), cache.WithNegativeIf(func(err error) bool { return errors.Is(err, errNotFound) }))
		p := c.Policy()
		wantDo(t, p, "k", func(context.Context) (string, error) { return "old", nil }, "old", nil)
		clk.Advance(2 * time.Second)
		wantDo(t, p, "k", func(context.Context) (string, error) { return "", errNotFound }, "", errNotFound)
		// Another error is covered by StaleIfError.
		wantDo(t, p, "k", func(context.Context) (string, error) { return "", errDown }, "old", nil)
	})
}

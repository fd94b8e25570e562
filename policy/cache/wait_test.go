package cache_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// A caller that gives up on a load records its outcome (Miss for the one
// that started it, Coalesced for one that joined it) and gets ctx.Err();
// a joined call is reported to the observer.
func TestGiveUpRecordsTheOutcome(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		rec := &recorder{}
		c := cache.New[string](time.Minute, cache.WithObserver(rec))
		p := c.Policy()
		release := make(chan struct{})
		op := func(context.Context) (string, error) { <-release; return "v", nil }
		type result struct {
			info cache.Info
			err  error
		}
		call := func(results chan<- result) context.CancelFunc {
			ctx, cancel := context.WithCancel(cache.Key(context.Background(), "k"))
			ctx, info := cache.WithInfo(ctx)
			info.Stale = true // must be overwritten
			go func() {
				_, err := p.Do(ctx, op)
				results <- result{*info, err}
			}()
			synctest.Wait()
			return cancel
		}
		first, second := make(chan result, 1), make(chan result, 1)
		cancelFirst := call(first)
		cancelSecond := call(second)
		cancelSecond()
		cancelFirst()
		for _, tc := range []struct {
			ch   chan result
			want cache.Outcome
		}{{first, cache.Miss}, {second, cache.Coalesced}} {
			r := <-tc.ch
			if !errors.Is(r.err, context.Canceled) {
				t.Fatalf("a caller that gave up got %v, want context.Canceled", r.err)
			}
			if diff := cmp.Diff(cache.Info{Outcome: tc.want}, r.info); diff != "" {
				t.Fatalf("Info of a caller that gave up mismatch (-want +got):\n%s", diff)
			}
		}
		close(release)
		synctest.Wait()
		if diff := cmp.Diff([]string{"cache.miss k", "cache.coalesced k"}, rec.take()); diff != "" {
			t.Fatalf("events mismatch (-want +got):\n%s", diff)
		}
		if s := c.Stats(); s.Entries != 1 {
			t.Fatalf("stats %+v: the load's value must be stored though its callers left", s)
		}
	})
}

// A caller whose load failed, where StaleIfError applies, gets the value a
// later load stored meanwhile: fresh, not stale, with no error.
func TestFailedLoadServesAFresherValueStoredMeanwhile(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Minute), cache.WithObserver(rec))
		p := c.Policy()
		wantDo(t, p, "k", func(context.Context) (string, error) { return "old", nil }, "old", nil)
		synctest.Wait()
		clk.Advance(2 * time.Second)
		release := make(chan struct{})
		slowFail := func(context.Context) (string, error) { <-release; return "", errDown }
		type result struct {
			v    string
			info cache.Info
			err  error
		}
		got := make(chan result, 1)
		go func() {
			ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
			v, err := p.Do(ctx, slowFail)
			got <- result{v, *info, err}
		}()
		synctest.Wait()
		c.Invalidate(context.Background(), "k") // the slow load's result will not be stored
		wantDo(t, p, "k", func(context.Context) (string, error) { return "new", nil }, "new", nil)
		synctest.Wait()
		rec.take()
		close(release)
		r := <-got
		if diff := cmp.Diff(result{v: "new", info: cache.Info{Outcome: cache.Miss}}, r, cmp.AllowUnexported(result{})); diff != "" {
			t.Fatalf("the failed load's caller mismatch (-want +got):\n%s", diff)
		}
		if ev := rec.take(); len(ev) != 0 {
			t.Fatalf("events %q, want none (no stale value served)", ev)
		}
		if s := c.Stats(); s.Stale != 0 {
			t.Fatalf("stats %+v: no stale value was served", s)
		}
	})
}

// A load that calls runtime.Goexit in a goroutine of its own makes each
// caller waiting for it panic, saying so; nothing is stored.
func TestLoadGoexitPanicsInTheCallers(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p := c.Policy()
		ctx, cancel := context.WithCancel(cache.Key(context.Background(), "k"))
		defer cancel()
		got := make(chan any, 1)
		go func() {
			defer func() { got <- recover() }()
			_, _ = p.Do(ctx, func(context.Context) (string, error) { runtime.Goexit(); return "", nil })
		}()
		r, _ := (<-got).(string)
		if !strings.HasPrefix(r, "cache: the load called runtime.Goexit") {
			t.Fatalf("recovered %q, want the Goexit panic", r)
		}
		synctest.Wait()
		if s := c.Stats(); s.Entries != 0 {
			t.Fatalf("stats %+v: nothing should be stored", s)
		}
	})
}

// Purge detaches the loads in flight: their callers get their results,
// which are not stored.
func TestPurgeDuringLoadDropsItsResult(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p := c.Policy()
		release := make(chan struct{})
		got := make(chan string, 1)
		go func() {
			v, _ := p.Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { <-release; return "old", nil })
			got <- v
		}()
		synctest.Wait()
		c.Purge(context.Background())
		close(release)
		if v := <-got; v != "old" {
			t.Fatalf("the caller of the purged load got %q, want old", v)
		}
		synctest.Wait()
		v, info, _ := get(t, p, func(context.Context) (string, error) { return "new", nil }, "k")
		if v != "new" || info.Outcome != cache.Miss {
			t.Fatalf("after Purge during a load: %q, %v; want a new load", v, info.Outcome)
		}
	})
}

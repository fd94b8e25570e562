package resilienceredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// The slowest bucket the scripts keep exactly: the interval T = 1/Rate and
// the time an empty bucket takes to fill, Burst·T, at most 2^52µs (about
// 142 years), the bound of the scripts' check of a stored value. The
// lowest Rate is so 1e6/2^52 (Burst 1).
var lowestRate = 1e6 / (1 << 52)

const (
	rateMsg  = "resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got "
	burstMsg = "resilienceredis: Burst/Rate, the time an empty bucket takes to fill, must be at most 2^52µs (4503599627.370496s, about 142 years), got "
)

// Validate and the constructors refuse a Rate, or a Burst at the Rate,
// past the bound, naming the field and the bound; they accept the bound.
func TestLimiterRateBound(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	for _, tt := range []struct {
		name  string
		rate  float64
		burst int
		want  string
	}{
		{"lowest rate", lowestRate, 1, ""},
		{"below the lowest rate", math.Nextafter(lowestRate, 0), 1, rateMsg + "2.2204460492503128e-10"},
		{"1e-300", 1e-300, 1, rateMsg + "1e-300"},
		{"burst at the bound", 3 * lowestRate, 3, ""},
		{"1e-9, burst 4", 1e-9, 4, ""},
		{"1e-9, burst 5", 1e-9, 5, burstMsg + "Burst 5 / Rate 1e-09 = 5e+09s"},
		{"rate 1, the largest burst", 1, 4503599627, ""},
		{"rate 1, burst 2^40", 1, 1 << 40, burstMsg + "Burst 1099511627776 / Rate 1 = 1.099511627776e+12s"},
		{"infinite rate, any burst", math.Inf(1), 1 << 40, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := (LimiterConfig{Rate: tt.rate, Burst: tt.burst}).Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate mismatch (-want +got):\n%s", diff)
			}
			for _, ctor := range []func(){
				func() { NewLimiter(rdb, "a", tt.rate, tt.burst) },
				func() { NewKeyedLimiter(rdb, "a", tt.rate, tt.burst) },
			} {
				got := func() (msg string) {
					defer func() {
						if r := recover(); r != nil {
							msg = fmt.Sprint(r)
						}
					}()
					ctor()
					return ""
				}()
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("constructor's panic mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// At the bound the limiter works on the real Redis: every decision is the
// fleet's bucket's (no LimiterLocal, no LimiterBucketRepaired: its own
// writes pass its check), a refusal's RetryAfter is the interval, Check
// finds nothing wrong.
func TestLimiterAtTheRateBound(t *testing.T) {
	ctx := ctxFor(t)
	for _, tt := range []struct {
		rate  float64
		burst int
	}{{lowestRate, 1}, {3 * lowestRate, 3}, {1e-9, 4}, {1, 4503599627}} {
		t.Run(strconv.FormatFloat(tt.rate, 'g', -1, 64)+"/"+strconv.Itoa(tt.burst), func(t *testing.T) {
			var rec eventlog.Recorder
			l := NewLimiter(newClient(t), "bound", tt.rate, tt.burst, WithPrefix(testPrefix(t)), WithObserver(&rec))
			defer l.Close()
			if !l.AllowN(ctx, tt.burst) {
				t.Fatal("a full bucket refused its burst")
			}
			err := l.take(ctx, 1)
			var re *resilience.RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) {
				t.Fatalf("the empty bucket's decision = %v, want a refusal", err)
			}
			interval := time.Duration(1e9 / tt.rate)
			if d := re.RetryAfter() - interval; d < -time.Second || d > 0 {
				t.Errorf("RetryAfter = %v, want the interval %v (within the second since the bucket emptied)", re.RetryAfter(), interval)
			}
			if n, err := l.AllowAtMost(ctx, tt.burst); n != 0 || !errors.Is(err, ratelimit.ErrLimited) {
				t.Errorf("AllowAtMost on the empty bucket = %d, %v; want 0 and a refusal", n, err)
			}
			if err := l.Check(ctx); err != nil {
				t.Errorf("Check() = %v", err)
			}
			if all := rec.All(); len(all) != 0 {
				t.Errorf("events %v, want none", all)
			}
			s := l.Snapshot()
			if diff := cmp.Diff([]float64{0, 3, 0}, []float64{s.Values[0].Value, s.Values[1].Value, s.Values[2].Value}); diff != "" {
				t.Errorf("local, decisions_shared, decisions_local mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A Wait with neither deadline nor MaxWait may not reserve past the
// horizon the scripts keep (2^52µs ahead, the fill time included): at the
// lowest rate, on an empty bucket, it is refused at once, takes nothing,
// and the next decision finds the bucket as it was (no repair).
func TestLimiterWaitStaysWithinTheHorizon(t *testing.T) {
	for _, tt := range []struct {
		rate  float64
		burst int
	}{{lowestRate, 1}, {3 * lowestRate, 3}} { // a fill time of 2^52µs: no wait is left
		t.Run(strconv.FormatFloat(tt.rate, 'g', -1, 64)+"/"+strconv.Itoa(tt.burst), func(t *testing.T) {
			ctx := ctxFor(t)
			var rec eventlog.Recorder
			l := NewLimiter(newClient(t), "horizon", tt.rate, tt.burst, WithPrefix(testPrefix(t)), WithObserver(&rec))
			defer l.Close()
			if !l.AllowN(ctx, tt.burst) {
				t.Fatal("a full bucket refused its burst")
			}
			wctx, cancel := context.WithCancel(context.Background()) // no deadline
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- l.Wait(wctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, ratelimit.ErrLimited) {
					t.Errorf("Wait past the horizon = %v, want a refusal (ErrLimited)", err)
				}
			case <-time.After(2 * time.Second):
				cancel()
				<-done
				t.Fatal("Wait past the horizon did not return within 2s: it reserved a token decades ahead")
			}
			if l.Allow(ctx) {
				t.Error("Allow after the refused Wait admitted: the bucket was reset")
			}
			if all := rec.All(); len(all) != 0 {
				t.Errorf("events %v, want none (no repair)", all)
			}
		})
	}
}

// Past the bound the scripts fail, which is why it is the bound: on the
// real Redis, a bucket that takes 10s more than 2^52µs to fill is taken
// for a value the limiter cannot have written at the next decision
// (LimiterBucketRepaired), and an interval of 1e306µs (Rate 1e-300) is an
// expiry Redis refuses (ErrUnusable, "not an integer or out of range").
func TestLimiterScriptsPastTheRateBound(t *testing.T) {
	ctx := ctxFor(t)
	l := NewLimiter(newClient(t), "past", lowestRate, 1, WithPrefix(testPrefix(t)))
	defer l.Close()
	tau := strconv.FormatFloat(1<<52+1e7, 'g', 17, 64)
	for i, want := range []bool{false, true} {
		_, _, _, repaired, err := l.script(ctx, []any{tau, tau, "1", "0"})
		if err != nil || repaired != want {
			t.Errorf("decision %d: repaired %v, error %v; want repaired %v", i, repaired, err, want)
		}
	}
	_, _, _, _, err := l.script(ctx, []any{"1e306", "1e306", "1", "0"})
	if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "not an integer or out of range") {
		t.Errorf("a decision at Rate 1e-300: %v, want ErrUnusable with the server's range error", err)
	}
}

// Check tries the writes the decisions make: a user who may read the
// bucket but not write it (ACL -set) has a limiter whose every decision
// is the fallback's, and Check says so (ErrUnusable, the server's "can't
// run this command") — as its doc promises for permissions.
func TestLimiterCheckTriesTheWrites(t *testing.T) {
	_, limited, _ := aclServer(t, "~*", "+@all", "-set")
	ctx := ctxFor(t)
	l := NewLimiter(limited, "nowrite", slow, 2)
	defer l.Close()
	err := l.Check(ctx)
	if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "can't run this command") {
		t.Fatalf("Check() = %v, want ErrUnusable with the server's refusal of SET", err)
	}
	if l.Allow(ctx); !errors.Is(l.p.why(), ErrUnusable) {
		t.Errorf("a decision's reason: %v, want the same refusal", l.p.why())
	}
}

// Check changes no bucket: one that holds tokens keeps its value (the
// text a Wait's refund compares) and its expiry, and it makes no key for
// a full bucket.
func TestLimiterCheckChangesNothing(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	l := NewLimiter(rdb, "unchanged", slow, 2, WithPrefix(testPrefix(t)))
	defer l.Close()
	key := l.keys[0]
	if err := l.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, key).Val(); n != 0 {
		t.Fatalf("Check of a full bucket made its key (%d)", n)
	}
	if !l.Allow(ctx) {
		t.Fatal("the full bucket refused")
	}
	before := rdb.Get(ctx, key).Val()
	ttlBefore := rdb.PTTL(ctx, key).Val()
	if err := l.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, rdb.Get(ctx, key).Val()); diff != "" {
		t.Errorf("the bucket's value after Check mismatch (-want +got):\n%s", diff)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl > ttlBefore || ttl < ttlBefore-time.Second {
		t.Errorf("the bucket's expiry after Check: %v, before %v", ttl, ttlBefore)
	}
	if !l.Allow(ctx) || l.Allow(ctx) {
		t.Error("after Check the bucket did not hold its one token left")
	}
}

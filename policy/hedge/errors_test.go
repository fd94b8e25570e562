package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// Regression: the error of a call whose attempts all failed held and
// printed every attempt's error: a huge MaxHedges (now bounded by
// MaxHedgesLimit) and an op that fails at once built a 4 MB message in
// 200 ms. It now keeps the first three and
// the last three, in start order, and says how many it left out.
func TestAllFailedErrorIsBounded(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		const hedges = hedge.MaxHedgesLimit
		errs := make([]error, 0, hedges+1)
		p := hedge.New[int](time.Hour, hedge.WithMaxHedges(hedges), hedge.WithClock(clock.NewFake()))
		v, err := p.Do(context.Background(), func(context.Context) (int, error) {
			i := len(errs) // attempts run one after another: each fails at once
			errs = append(errs, fmt.Errorf("attempt %d failed", i))
			return i, errs[i]
		})
		if len(errs) != hedges+1 || v != hedges {
			t.Fatalf("Do = %d after %d attempts, want %d after %d", v, len(errs), hedges, hedges+1)
		}
		want := "hedge: all 11 attempts failed: attempt 0 failed; attempt 1 failed; attempt 2 failed; (5 more); attempt 8 failed; attempt 9 failed; attempt 10 failed"
		if err == nil || err.Error() != want {
			t.Errorf("err = %.300v\nwant %q", err, want)
		}
		for _, i := range []int{0, 1, 2, hedges - 2, hedges - 1, hedges} {
			if !errors.Is(err, errs[i]) {
				t.Errorf("err does not match attempt %d's error, one it keeps", i)
			}
		}
		if errors.Is(err, errs[hedges/2]) {
			t.Errorf("err matches attempt %d's error, which it should have left out", hedges/2)
		}
		var multi interface{ Unwrap() []error }
		if !errors.As(err, &multi) {
			t.Fatalf("err %v has no Unwrap() []error", err)
		}
		kept := []error{errs[0], errs[1], errs[2], errs[hedges-2], errs[hedges-1], errs[hedges]}
		if diff := cmp.Diff(kept, multi.Unwrap(), cmpopts.EquateErrors()); diff != "" {
			t.Errorf("Unwrap() mismatch (-want +got):\n%s", diff)
		}

		// The caller's context error comes first, and is kept as well.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errs = errs[:0]
		_, err = p.Do(ctx, func(context.Context) (int, error) {
			i := len(errs)
			errs = append(errs, fmt.Errorf("attempt %d failed", i))
			if i == 9 {
				cancel()
			}
			return i, errs[i]
		})
		want = "hedge: context canceled after 10 attempts: attempt 0 failed; attempt 1 failed; attempt 2 failed; (4 more); attempt 7 failed; attempt 8 failed; attempt 9 failed"
		if err == nil || err.Error() != want {
			t.Errorf("err = %.300v\nwant %q", err, want)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errs[9]) {
			t.Errorf("err = %v, want it to match context.Canceled and the last attempt's error", err)
		}
	})
}

// The attempts kept are the first three and the last three to start,
// whatever the order they fail in.
func TestAllFailedKeepsFirstAndLastStarted(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		// Attempt i starts at 10ms*i and fails at 200ms - 10ms*i: the last
		// to start fails first.
		steps := make([]step, 8)
		for i := range steps {
			steps[i] = step{d: 200*ms - 20*ms*time.Duration(i), v: i, err: fmt.Errorf("e%d", i)}
		}
		l := newLog(steps...)
		v, err := hedge.New[int](10*ms, hedge.WithMaxHedges(7)).Do(context.Background(), l.op)
		if want := "hedge: all 8 attempts failed: e0; e1; e2; (2 more); e5; e6; e7"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if v != 0 {
			t.Errorf("v = %d, want the value of the attempt that failed last, 0", v)
		}
		for _, i := range []int{0, 1, 2, 5, 6, 7} {
			if !errors.Is(err, steps[i].err) {
				t.Errorf("err does not match attempt %d's error", i)
			}
		}
	})
}

// The message says how many attempts it left out only when it left some
// out: none of 5 (4 kept), and 1 of 7 (6 kept).
func TestAllFailedMessageCountsTheLeftOut(t *testing.T) {
	for _, tc := range []struct {
		hedges int
		want   string
	}{
		{4, "hedge: all 5 attempts failed: attempt 0 failed; attempt 1 failed; attempt 2 failed; attempt 3 failed; attempt 4 failed"},
		{6, "hedge: all 7 attempts failed: attempt 0 failed; attempt 1 failed; attempt 2 failed; (1 more); attempt 4 failed; attempt 5 failed; attempt 6 failed"},
	} {
		bubbleWithin(t, func(t *testing.T) {
			n := 0
			p := hedge.New[int](time.Hour, hedge.WithMaxHedges(tc.hedges), hedge.WithClock(clock.NewFake()))
			_, err := p.Do(context.Background(), func(context.Context) (int, error) {
				i := n // attempts run one after another: each fails at once
				n++
				return 0, fmt.Errorf("attempt %d failed", i)
			})
			if err == nil || err.Error() != tc.want {
				t.Errorf("MaxHedges %d: err = %v\nwant %q", tc.hedges, err, tc.want)
			}
		})
	}
}

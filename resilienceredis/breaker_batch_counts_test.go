package resilienceredis

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// brFlushCounts returns the counts of each batch sent to fake: successes,
// failures, slow calls, failures before the first success, longest run
// of failures, failures after the last success.
func brFlushCounts(f *brFake, runs []string, args [][]any) []string {
	var out []string
	for i, r := range runs {
		if r == "flush" {
			out = append(out, fmt.Sprint(args[i][9:15]...))
		}
	}
	return out
}

// Each batch sends its own counts: those of a batch already sent do not
// carry into the next (a slow success, then another: each batch has one
// slow call, no failure and no run of failures). A call longer than
// SlowCall is slow, for any SlowCall, 1ns too.
func TestBreakerBatchCountsItsOwnCalls(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(1), WithSlowCall(time.Nanosecond))
	var args [][]any
	f.set(func(script string, a []any) ([]any, error) {
		args = append(args, a)
		return brReply(7, 1, 0, 0, 1), nil
	})
	b.sync()
	for range 2 {
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		b.skew.Add(int64(time.Millisecond)) // the call takes a millisecond
		p.Done(nil)
		b.flush()
	}
	want := []string{"1 0 1 0 0 0", "1 0 1 0 0 0"}
	if diff := cmp.Diff(want, brFlushCounts(f, f.runs(), args)); diff != "" {
		t.Errorf("batches sent (succ fail slow lead run cur) mismatch (-want +got):\n%s", diff)
	}
}

// A call is slow when it takes longer than SlowCall: one that takes
// exactly SlowCall is not (time in a synctest bubble stands still but
// for the sleeps).
func TestBreakerSlowCallIsLonger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := brFakeBreaker(t, WithThreshold(10), WithSlowCall(time.Second))
		b.sync()
		for _, d := range []time.Duration{time.Second, time.Second + time.Nanosecond} {
			p, err := b.Allow()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			p.Done(nil)
		}
		if b.batch.slow != 1 || b.batch.n != 2 {
			t.Errorf("calls of 1s and 1s+1ns with SlowCall 1s: %d slow of %d; want 1 of 2", b.batch.slow, b.batch.n)
		}
	})
}

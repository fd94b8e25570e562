package sim

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
)

// A NewTimer's channel works as a time.Timer's of Go 1.23+: a value sent
// while nobody receives waits in the channel; after Stop or Reset, no
// value sent before is received, and Stop and Reset report false for a
// timer that already fired.
func TestTimerChannel(t *testing.T) {
	ms := time.Millisecond
	var got []string
	runProbe(t, func(clk clock.Clock, ctx context.Context) {
		now := func() string { return clk.Now().Sub(epoch).String() }
		held := func(tm clock.Timer) string {
			select {
			case v := <-tm.C():
				return "a value of " + v.Sub(epoch).String()
			default:
				return "nothing"
			}
		}
		tm := clk.NewTimer(ms)
		_ = clk.Sleep(ctx, 2*ms) // it fires at 1ms; nobody receives
		got = append(got, "fired unreceived, at "+now()+": "+held(tm))

		tm = clk.NewTimer(ms)
		_ = clk.Sleep(ctx, 2*ms)
		got = append(got, "Stop after it fired: "+strconv.FormatBool(tm.Stop()))
		got = append(got, "after Stop: "+held(tm))

		tm = clk.NewTimer(ms)
		_ = clk.Sleep(ctx, 2*ms)
		got = append(got, "Reset(1ms) at "+now()+" after it fired: "+strconv.FormatBool(tm.Reset(ms)))
		got = append(got, "after Reset: "+held(tm))
		_ = clk.Sleep(ctx, 2*ms)
		got = append(got, "at "+now()+": "+held(tm))
	})
	want := []string{
		"fired unreceived, at 2ms: a value of 1ms",
		"Stop after it fired: false",
		"after Stop: nothing",
		"Reset(1ms) at 6ms after it fired: false",
		"after Reset: nothing",
		"at 8ms: a value of 7ms",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a NewTimer's channel mismatch (-want +got):\n%s", diff)
	}
}

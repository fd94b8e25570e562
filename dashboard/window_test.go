package dashboard

import (
	"context"
	"math"
	"testing"
	"time"
)

// The window holds each of the last 10 seconds: a call in each of three
// seconds in a row counts three times, whichever second it fell in.
func TestMeasureWindowKeepsEverySecondOfIt(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	for range 3 {
		_, _ = p.Do(context.Background(), op(f, 0, nil))
		f.Advance(time.Second)
	}
	if r := d.meter("db").read(f.Now()); r.winOK != 3 {
		t.Errorf("window ok %d after a call in each of the last 3 s, want 3", r.winOK)
	}
}

// A call that leaves the window leaves the percentiles: a fast call 11 s
// ago does not pull down the median of the one slow call in the window.
func TestMeasureWindowForgetsOldLatencies(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	p := Measure[int](d, "db")
	_, _ = p.Do(context.Background(), op(f, time.Millisecond, nil))
	f.Advance(11 * time.Second)
	_, _ = p.Do(context.Background(), op(f, time.Second, nil))
	r := d.meter("db").read(f.Now())
	if math.Abs(r.latency[0]-1e9) > 1e9/16 {
		t.Errorf("p50 %.3g ns, want about 1 s: the 1 ms call left the window 1 s ago", r.latency[0])
	}
}

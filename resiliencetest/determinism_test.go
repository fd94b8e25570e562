package resiliencetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// outcome is what one driven call came to: its error and the virtual time
// it took.
type outcome struct {
	Err     string
	Elapsed time.Duration
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A 50 ms op under a 200 ms timeout, driven with a step of the op's
// latency: the timeout's timer is armed before the op's, and the call
// returns while the timeout's timer is still armed; Drive must neither move
// the clock before the op has armed its timer nor after the call returned.
func TestDriveTimeoutOverDelayIsDeterministic(t *testing.T) {
	const runs = 1000
	seen := map[outcome]int{}
	for range runs {
		fake := clock.NewFake()
		start := fake.Now()
		p := timeout.New[struct{}](200*time.Millisecond, timeout.WithClock(fake))
		op := resiliencetest.NewDependency(struct{}{}, resiliencetest.Delay(fake, resiliencetest.Fixed(50*time.Millisecond)))
		var err error
		if derr := resiliencetest.Drive(fake, 50*time.Millisecond, func() { _, err = p.Do(context.Background(), op.Call) }); derr != nil {
			t.Fatalf("Drive = %v", derr)
		}
		seen[outcome{errString(err), fake.Now().Sub(start)}]++
	}
	want := map[outcome]int{{Err: "", Elapsed: 50 * time.Millisecond}: runs}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("outcomes over %d runs = %v, want %v", runs, seen, want)
	}
}

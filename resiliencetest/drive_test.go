package resiliencetest

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// TestDrive runs a loop of waits on the fake clock: Drive moves the clock
// until the loop ends, and no more.
func TestDrive(t *testing.T) {
	fake := clock.NewFake()
	start := fake.Now()
	waited := 0
	err := Drive(fake, time.Second, func() {
		for range 5 {
			if err := fake.Sleep(context.Background(), 3*time.Second); err != nil {
				return
			}
			waited++
		}
	})
	if err != nil {
		t.Fatalf("Drive = %v", err)
	}
	if waited != 5 {
		t.Errorf("%d waits ended, want 5", waited)
	}
	if got := fake.Now().Sub(start); got != 15*time.Second {
		t.Errorf("the clock moved %v, want 15s (five waits of 3s, in steps of 1s)", got)
	}
}

func TestDriveNoWait(t *testing.T) {
	fake := clock.NewFake()
	ran := false
	if err := Drive(fake, time.Second, func() { ran = true }); err != nil || !ran {
		t.Errorf("Drive = %v, ran %v; want nil, true", err, ran)
	}
	if got := fake.Now(); !got.Equal(clock.NewFake().Now()) {
		t.Errorf("the clock moved to %v for a call that never waited", got)
	}
}

func TestDrivePanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	_ = Drive(clock.NewFake(), time.Second, func() { panic("boom") })
	t.Fatal("Drive did not panic")
}

func TestDriveInvalid(t *testing.T) {
	wantPanic(t, "resiliencetest: Drive step must be > 0, got 0s", func() { _ = Drive(clock.NewFake(), 0, func() {}) })
}

package resiliencetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// TestMain checks, before the tests, that a Dependency's call and a Drive
// of a short call return at all: each within liveBound, a bound for
// failure only (they return in microseconds). A Drive or a Dependency that
// never returns, or that waits out DriveTimeout for nothing, then fails at
// once rather than hanging the tests that drive hundreds of calls.
func TestMain(m *testing.M) {
	if err := liveness(); err != nil {
		fmt.Fprintln(os.Stderr, "resiliencetest:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// liveBound is how long a check may take to return.
const liveBound = 2 * time.Second

func liveness() error {
	checks := []struct {
		what string
		f    func() error
	}{
		{"a Dependency's call", func() error {
			_, err := resiliencetest.NewDependency(1, resiliencetest.Healthy()).Call(context.Background())
			return err
		}},
		{"Drive of a call that returns at once", func() error {
			return resiliencetest.Drive(clock.NewFake(), time.Second, func() {})
		}},
		{"Drive of a call that waits on the fake three times", func() error {
			fake := clock.NewFake()
			start := fake.Now()
			err := resiliencetest.Drive(fake, time.Second, func() {
				for range 3 {
					_ = fake.Sleep(context.Background(), time.Second)
				}
			})
			if moved := fake.Now().Sub(start); err == nil && moved != 3*time.Second {
				return fmt.Errorf("the clock moved %v, want 3s", moved)
			}
			return err
		}},
		{"Drive of a call that leaves a goroutine blocked", func() error {
			fake := clock.NewFake()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			return resiliencetest.Drive(fake, time.Second, func() {
				go func() { _ = fake.Sleep(ctx, time.Hour) }()
			})
		}},
	}
	for _, c := range checks {
		done := make(chan error, 1)
		go func() { done <- c.f() }()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
		case <-time.After(liveBound):
			return errors.New(c.what + " did not return after " + liveBound.String())
		}
	}
	return nil
}

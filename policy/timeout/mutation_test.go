package timeout_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// TestNewNilOptionPanicsNamingIt: a nil option panics with the package's
// message, not a nil dereference.
func TestNewNilOptionPanicsNamingIt(t *testing.T) {
	defer func() {
		if r, _ := recover().(string); !strings.Contains(r, "timeout: New option must not be nil") {
			t.Errorf("panic = %q, want the nil option named", r)
		}
	}()
	timeout.New[int](time.Second, nil)
}

// TestNewOneNanosecond: any duration above 0 is valid, 1ns included.
func TestNewOneNanosecond(t *testing.T) {
	timeout.New[int](time.Nanosecond)
}

// watchedCtx counts the contexts that watch it (through its AfterFunc, as
// the context package's derived contexts do) and have not stopped.
type watchedCtx struct {
	context.Context
	watching int
}

// Value hides the embedded context's values, the context package's own
// key among them, so that derived contexts watch c through AfterFunc
// rather than through the embedded one directly.
func (c *watchedCtx) Value(any) any { return nil }

func (c *watchedCtx) AfterFunc(f func()) func() bool {
	c.watching++
	stop := context.AfterFunc(c.Context, f)
	return func() bool {
		c.watching--
		return stop()
	}
}

// TestCallLeavesNothingOnTheCallersContext: with a clock of its own, once
// the policy returns, the op's context is cancelled and no longer watches
// the caller's: nothing is left registered on a long-lived context.
func TestCallLeavesNothingOnTheCallersContext(t *testing.T) {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent := &watchedCtx{Context: base}
	p := timeout.New[int](time.Second, timeout.WithClock(clock.NewFake()))
	var got context.Context
	if _, err := p.Do(parent, func(ctx context.Context) (int, error) { got = ctx; return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got.Err(), context.Canceled) {
		t.Errorf("after the call: the op's context has Err %v, want context.Canceled", got.Err())
	}
	if parent.watching != 0 {
		t.Errorf("after the call: %d contexts still watch the caller's", parent.watching)
	}
}

// TestOptionsPanicNamingTheValue: WithClock(nil) and a name that is not
// valid UTF-8 panic when the option is made, naming it.
func TestOptionsPanicNamingTheValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func() timeout.Option
		want string
	}{
		{"WithClock(nil)", func() timeout.Option { return timeout.WithClock(nil) },
			"timeout: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
		{"WithName(invalid UTF-8)", func() timeout.Option { return timeout.WithName("x\xff") },
			`timeout: WithName("x\xff"): name must be valid UTF-8`},
	} {
		got := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			tc.opt()
			return ""
		}()
		if got != tc.want {
			t.Errorf("%s panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

package guardopt_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/guardopt"
)

func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func TestPanics(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		f          func()
	}{
		{"bad name", `breaker: WithName("db\xff"): name must be valid UTF-8`, func() { guardopt.Name("breaker", "db\xff") }},
		{"good name", "", func() { guardopt.Name("breaker", "db") }},
		{"empty name", "", func() { guardopt.Name("breaker", "") }},
		{"nil clock", "bulkhead: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()", func() { guardopt.Clock("bulkhead", nil) }},
		{"a clock", "", func() { guardopt.Clock("bulkhead", clock.NewFake()) }},
	} {
		if diff := cmp.Diff(tt.want, panicOf(tt.f)); diff != "" {
			t.Errorf("%s: panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	fake := clock.NewFake()
	if guardopt.Clock("x", fake) != fake || guardopt.Name("x", "db") != "db" {
		t.Error("Clock or Name did not return its argument")
	}
}

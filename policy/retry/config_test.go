package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/retry"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*retry.Config)
		want string // "" = valid
	}{
		{"default", func(*retry.Config) {}, ""},
		{"one attempt", func(c *retry.Config) { c.Attempts = 1 }, ""},
		{"unlimited with bounds", func(c *retry.Config) { c.Attempts, c.MaxElapsed = 0, time.Second }, ""},
		{"negative attempts", func(c *retry.Config) { c.Attempts = -3 },
			"retry: Attempts must be >= 0 (0 = no limit), got -3"},
		{"negative max elapsed", func(c *retry.Config) { c.MaxElapsed = -time.Second },
			"retry: MaxElapsed must be >= 0 (0 = no bound), got -1s"},
		{"unbounded", func(c *retry.Config) { c.Attempts = 0 },
			"retry: Attempts 0 (no limit) needs a MaxElapsed > 0, got 0s"},
		{"tight loop", func(c *retry.Config) { c.Attempts, c.MaxElapsed, c.Backoff = 0, time.Second, backoff.Constant(0) },
			"retry: Attempts 0 (no limit) needs a Backoff with Max > 0, got constant(0s)"},
		{"zero config", func(c *retry.Config) { *c = retry.Config{} },
			"retry: Attempts 0 (no limit) needs a MaxElapsed > 0, got 0s"},
	} {
		c := retry.DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if got := errString(err); got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
		got := panicString(func() { retry.New[int](retry.WithConfig(c)) })
		if got != tc.want {
			t.Errorf("%s: New panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestValidateBudget(t *testing.T) {
	ok := retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second}
	for _, tc := range []struct {
		name string
		edit func(*retry.BudgetConfig)
		want string
	}{
		{"finagle defaults", func(*retry.BudgetConfig) {}, ""},
		{"ratio only", func(c *retry.BudgetConfig) { c.MinPerSecond = 0 }, ""},
		{"floor only", func(c *retry.BudgetConfig) { c.Ratio = 0 }, ""},
		{"negative ratio", func(c *retry.BudgetConfig) { c.Ratio = -0.5 },
			"retry: BudgetConfig.Ratio must be finite and >= 0, got -0.5"},
		{"NaN ratio", func(c *retry.BudgetConfig) { c.Ratio = math.NaN() },
			"retry: BudgetConfig.Ratio must be finite and >= 0, got NaN"},
		{"infinite ratio", func(c *retry.BudgetConfig) { c.Ratio = math.Inf(1) },
			"retry: BudgetConfig.Ratio must be finite and >= 0, got +Inf"},
		{"negative floor", func(c *retry.BudgetConfig) { c.MinPerSecond = -1 },
			"retry: BudgetConfig.MinPerSecond must be finite and >= 0, got -1"},
		{"infinite floor", func(c *retry.BudgetConfig) { c.MinPerSecond = math.Inf(1) },
			"retry: BudgetConfig.MinPerSecond must be finite and >= 0, got +Inf"},
		{"zero window", func(c *retry.BudgetConfig) { c.Window = 0 },
			"retry: BudgetConfig.Window must be > 0, got 0s"},
		{"nothing allowed", func(c *retry.BudgetConfig) { c.Ratio, c.MinPerSecond = 0, 0 },
			"retry: BudgetConfig allows no retry at all: Ratio and MinPerSecond are both 0"},
	} {
		c := ok
		tc.edit(&c)
		if got := errString(c.Validate()); got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
		if got := panicString(func() { retry.NewBudget(c) }); got != tc.want {
			t.Errorf("%s: NewBudget panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestZeroBudgetIsRejected(t *testing.T) {
	want := "retry: Budget must be made by NewBudget, got a zero Budget"
	c := retry.DefaultConfig()
	c.Budget = &retry.Budget{}
	if got := errString(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	if got := panicString(func() { retry.New[int](retry.WithBudget(&retry.Budget{})) }); got != want {
		t.Errorf("New panicked with %q, want %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// panicString runs f and returns what it panicked with, as a string ("" if
// it did not panic).
func panicString(f func()) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = r.(string)
		}
	}()
	f()
	return ""
}

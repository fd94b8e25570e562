package chaos_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/internal/eventlog"
	"github.com/f0b5b96b/resilience/policy/chaos"
)

// panicOf returns what f panics with, or "" if it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    chaos.Config
		want string
	}{
		{"zero: the defaults", chaos.Config{}, ""},
		{"full", chaos.Config{Rate: 1, Disabled: true, Name: "x"}, ""},
		{"Rate above 1", chaos.Config{Rate: 1.5}, "chaos: Rate must be in [0, 1], or 0 for NewInjector's rate, got 1.5"},
		{"negative Rate", chaos.Config{Rate: -0.1}, "chaos: Rate must be in [0, 1], or 0 for NewInjector's rate, got -0.1"},
		{"NaN Rate", chaos.Config{Rate: math.NaN()}, "chaos: Rate must be in [0, 1], or 0 for NewInjector's rate, got NaN"},
	} {
		got := ""
		if err := tt.c.Validate(); err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Validate() mismatch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, panicOf(func() { chaos.NewInjector(0.5, chaos.WithConfig(tt.c)) })); diff != "" {
			t.Errorf("%s: NewInjector panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// WithConfig sets only the fields that are not zero: Config.Rate replaces
// NewInjector's rate, Config{} keeps it, and options after it win.
func TestWithConfig(t *testing.T) {
	var rec eventlog.Recorder
	for _, tt := range []struct {
		name    string
		opts    []chaos.Option
		rate    float64
		enabled bool
		label   string
	}{
		{"none", nil, 0.5, true, ""},
		{"Config{} keeps the rate", []chaos.Option{chaos.WithConfig(chaos.Config{})}, 0.5, true, ""},
		{"Config.Rate replaces it", []chaos.Option{chaos.WithConfig(chaos.Config{Rate: 0.25})}, 0.25, true, ""},
		{"Disabled", []chaos.Option{chaos.WithConfig(chaos.Config{Disabled: true})}, 0.5, false, ""},
		{"an option after the Config wins", []chaos.Option{chaos.WithConfig(chaos.Config{Name: "a"}), chaos.WithName("b")}, 0.5, true, "b"},
		{"a Config without Name keeps an earlier one", []chaos.Option{chaos.WithName("b"), chaos.WithConfig(chaos.Config{Rate: 1})}, 1, true, "b"},
		{"Observer from Config", []chaos.Option{chaos.WithConfig(chaos.Config{Observer: &rec})}, 0.5, true, ""},
	} {
		in := chaos.NewInjector(0.5, tt.opts...)
		if in.Rate() != tt.rate || in.Enabled() != tt.enabled || in.Name() != tt.label {
			t.Errorf("%s: rate %v, enabled %v, name %q; want %v, %v, %q", tt.name, in.Rate(), in.Enabled(), in.Name(), tt.rate, tt.enabled, tt.label)
		}
	}
	// A disabled injector decides no call, at its rate of 1.
	off := chaos.NewInjector(1, chaos.WithConfig(chaos.Config{Disabled: true}))
	if off.Inject() {
		t.Error("an injector made with Config.Disabled injected")
	}
	// The observer of a Config gets the events.
	in := chaos.NewInjector(1, chaos.WithConfig(chaos.Config{Observer: &rec}))
	in.Inject()
	if len(rec.All()) != 1 {
		t.Errorf("the observer of Config got %d events, want 1", len(rec.All()))
	}
}

func TestConfigJSON(t *testing.T) {
	c := chaos.Config{Rate: 0.05, Disabled: true, Name: "checkout", Random: func() float64 { return 0 }}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"Rate":0.05,"Disabled":true,"Name":"checkout"}`, string(b)); diff != "" {
		t.Fatalf("MarshalJSON mismatch (-want +got):\n%s", diff)
	}
	file, err := os.ReadFile("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{b, file} {
		var got chaos.Config
		if err := json.Unmarshal(in, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got, cmpopts.IgnoreFields(chaos.Config{}, "Random")); diff != "" || got.Random != nil {
			t.Fatalf("round trip of %s mismatch (-want +got):\n%s", in, diff)
		}
	}
	for in, want := range map[string]string{
		`{"Random":1}`: `chaos: Config: unknown field "Random"`,
		`{"Rate":"x"}`: `chaos: Config.Rate`,
	} {
		var c chaos.Config
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s): %v, want %q", in, err, want)
		}
	}
}

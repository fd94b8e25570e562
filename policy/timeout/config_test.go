package timeout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// returnedAfter runs p on an op that ignores its context for a minute and
// reports when the call returned: at the deadline if p abandons the op,
// after the minute if it waits for it.
func returnedAfter(t *testing.T, p resilience.Policy[int]) time.Duration {
	t.Helper()
	var took time.Duration
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) {
			time.Sleep(time.Minute)
			return 0, nil
		})
		took = time.Since(start)
		time.Sleep(time.Minute) // let an abandoned op end inside the bubble
	})
	return took
}

// A zero field is the field's default, and WithConfig sets only the
// non-zero fields of its Config: it never erases New's duration or an
// earlier option.
func TestZeroFieldsAreDefaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        resilience.Policy[int]
		wantName string
		want     time.Duration
	}{
		{"Config{}", timeout.New[int](time.Second, timeout.WithConfig(timeout.Config{})), "timeout(1s)", time.Minute},
		{"Config keeps New's duration", timeout.New[int](time.Second, timeout.WithConfig(timeout.Config{Abandon: true})), "timeout(1s)", time.Second},
		{"Config replaces New's duration", timeout.New[int](time.Second, timeout.WithAbandon(true), timeout.WithConfig(timeout.Config{Duration: 2 * time.Second})), "timeout(2s)", 2 * time.Second},
		{"Config keeps an earlier option", timeout.New[int](time.Second, timeout.WithAbandon(true), timeout.WithConfig(timeout.Config{})), "timeout(1s)", time.Second},
		{"a later option overrides Config", timeout.New[int](time.Second, timeout.WithConfig(timeout.Config{Abandon: true}), timeout.WithAbandon(false)), "timeout(1s)", time.Minute},
	} {
		if got := tc.p.String(); got != tc.wantName {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, tc.wantName)
		}
		if got := returnedAfter(t, tc.p); got != tc.want {
			t.Errorf("%s: returned after %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c    timeout.Config
		want string
	}{
		{timeout.Config{}, ""},
		{timeout.Config{Duration: 1}, ""},
		{timeout.Config{Duration: -time.Second, Abandon: true}, "timeout: Duration must be > 0, or 0 for New's duration, got -1s"},
		{timeout.Config{Duration: -1}, "timeout: Duration must be > 0, or 0 for New's duration, got off"}, // "off" in JSON
	} {
		got := ""
		if err := tc.c.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v.Validate() = %q, want %q", tc.c, got, tc.want)
		}
		if tc.want == "" {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("New with %+v panicked with %v, want %q", tc.c, r, tc.want)
				}
			}()
			timeout.New[int](time.Second, timeout.WithConfig(tc.c))
		}()
	}
	for _, d := range []time.Duration{0, -time.Second} {
		want := fmt.Sprintf("timeout: Duration must be > 0, got %v", d)
		func() {
			defer func() {
				if r := recover(); r != want {
					t.Errorf("New(%v) panicked with %v, want %q", d, r, want)
				}
			}()
			timeout.New[int](d)
		}()
		func() {
			defer func() {
				if r := recover(); r != want {
					t.Errorf("New(%v) with a zero Config panicked with %v, want %q", d, r, want)
				}
			}()
			timeout.New[int](d, timeout.WithConfig(timeout.Config{Abandon: true}))
		}()
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	full := timeout.Config{Name: "quotes", Duration: 250 * time.Millisecond, Abandon: true, Clock: clock.NewFake(), Observer: telemetry.NewCounter()}
	data, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"Name":"quotes","Duration":"250ms","Abandon":true}`, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var got timeout.Config
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := full
	want.Clock, want.Observer = nil, nil // not serialised
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if data, err := json.Marshal(timeout.Config{}); err != nil || string(data) != "{}" {
		t.Errorf("Marshal(Config{}) = %s, %v; want {}", data, err)
	}
	for in, want := range map[string]string{
		`{"Duration": 250}`:    "timeout: ",
		`{"Abandon": "yes"}`:   "timeout: ",
		`{"Clock": "real"}`:    `unknown field "Clock"`,
		`{"Deadline": "1s"}`:   `unknown field "Deadline"`,
		`{"Duration": "soon"}`: "time: invalid duration",
	} {
		var c timeout.Config
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.HasPrefix(err.Error(), "timeout: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) = %v, want an error starting \"timeout: \" with %q", in, err, want)
		}
	}
}

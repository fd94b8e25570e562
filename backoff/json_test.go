package backoff_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/backoff"
)

func TestScheduleJSONRoundTrip(t *testing.T) {
	tests := []struct {
		s    backoff.Schedule
		want string
	}{
		{backoff.Schedule{}, `null`},
		{backoff.Constant(0), `{"Kind":"constant"}`},
		{backoff.Constant(time.Second), `{"Kind":"constant","Base":"1s"}`},
		{backoff.Linear(100*time.Millisecond, 50*time.Millisecond, time.Second).WithJitter(backoff.Equal),
			`{"Kind":"linear","Base":"100ms","Step":"50ms","Max":"1s","Jitter":"equal"}`},
		{backoff.Exponential(100*time.Millisecond, 2, 10*time.Second).WithJitter(backoff.Full),
			`{"Kind":"exponential","Base":"100ms","Multiplier":2,"Max":"10s","Jitter":"full"}`},
		{backoff.Exponential(time.Millisecond, 1.5, time.Minute).WithJitter(backoff.Decorrelated),
			`{"Kind":"exponential","Base":"1ms","Multiplier":1.5,"Max":"1m0s","Jitter":"decorrelated"}`},
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.s)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", tt.s, err)
		}
		if diff := cmp.Diff(tt.want, string(data)); diff != "" {
			t.Errorf("Marshal(%v) mismatch (-want +got):\n%s", tt.s, diff)
		}
		var back backoff.Schedule
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		if back != tt.s {
			t.Errorf("round trip of %v gave %v", tt.s, back)
		}
	}
}

func TestScheduleJSONErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"Kind":"fibonacci"}`, `backoff: Schedule Kind must be "constant", "linear" or "exponential", got "fibonacci"`},
		{`{"Base":"1s"}`, `backoff: Schedule Kind must be`},
		{`{"Kind":"exponential","Base":"1s","Multiplier":0.5,"Max":"2s"}`, `backoff: Exponential multiplier must be >= 1, got 0.5`},
		{`{"Kind":"linear","Base":"2s","Step":"1s","Max":"1s"}`, `backoff: Linear max must be >= base (2s), got 1s`},
		{`{"Kind":"constant","Base":"1s","Jitter":"lots"}`, `backoff: Schedule Jitter must be`},
		{`{"Kind":"constant","Base":"1s","Multiplier":2}`, `backoff: Schedule Multiplier does not apply to kind "constant"`},
		{`{"Kind":"constant","Base":"1s","Step":"1s"}`, `backoff: Schedule Step does not apply to kind "constant"`},
		{`{"Kind":"linear","Base":"1s","Step":"1s","Multiplier":2}`, `backoff: Schedule Multiplier does not apply to kind "linear"`},
		{`{"Kind":"constant","Base":"1s","Max":"5s"}`, `backoff: Schedule Max does not apply to kind "constant"`},
		{`{"Kind":"exponential","Base":"1s","Step":"1s","Multiplier":2,"Max":"5s"}`, `backoff: Schedule Step does not apply to kind "exponential"`},
		{`{"Kind":"constant","Base":100}`, `backoff: Schedule.Base: a duration must be a string`},
		{`{"Kind":"constant","Wait":"1s"}`, `backoff: Schedule: unknown field "Wait"`},
	}
	for _, tt := range tests {
		var s backoff.Schedule
		err := json.Unmarshal([]byte(tt.in), &s)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error starting %q", tt.in, err, tt.want)
		}
		if s != (backoff.Schedule{}) {
			t.Errorf("Unmarshal(%s) changed the schedule to %v on error", tt.in, s)
		}
	}
}

// Regression: a schedule's JSON without Multiplier failed ("multiplier
// must be >= 1, got 0"), though an absent field means its default as in
// every Config. Each field absent (or 0) means its default; each default
// is a valid schedule, and what MarshalJSON writes still reads back as it
// was.
func TestScheduleJSONAbsentFieldsAreDefaults(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want backoff.Schedule
	}{
		{`{"Kind":"exponential","Base":"100ms","Max":"10s"}`, backoff.Exponential(100*time.Millisecond, 2, 10*time.Second)},
		{`{"Kind":"exponential","Base":"100ms","Multiplier":0,"Max":"10s"}`, backoff.Exponential(100*time.Millisecond, 2, 10*time.Second)},
		{`{"Kind":"exponential","Base":"100ms"}`, backoff.Exponential(100*time.Millisecond, 2, 10*time.Second)},
		{`{"Kind":"exponential","Base":"30s","Multiplier":3}`, backoff.Exponential(30*time.Second, 3, 30*time.Second)},
		{`{"Kind":"exponential"}`, backoff.Exponential(0, 2, 0)},
		{`{"Kind":"linear","Base":"1s","Step":"1s"}`, backoff.Linear(time.Second, time.Second, 10*time.Second)},
		{`{"Kind":"linear","Step":"1s"}`, backoff.Linear(0, time.Second, 10*time.Second)},
		{`{"Kind":"linear","Base":"1s"}`, backoff.Linear(time.Second, 0, 10*time.Second)},
		{`{"Kind":"linear","Base":"1ns"}`, backoff.Linear(1, 0, 10*time.Second)},
		{`{"Kind":"linear","Step":"1ns"}`, backoff.Linear(0, 1, 10*time.Second)},
		{`{"Kind":"exponential","Base":"1ns"}`, backoff.Exponential(1, 2, 10*time.Second)},
		{`{"Kind":"linear"}`, backoff.Linear(0, 0, 0)},
		{`{"Kind":"constant"}`, backoff.Constant(0)},
		{`{"Kind":"constant","Jitter":"full"}`, backoff.Constant(0).WithJitter(backoff.Full)},
	} {
		var got backoff.Schedule
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// Schedules whose zero fields MarshalJSON leaves out read back equal.
	for _, s := range []backoff.Schedule{
		backoff.Exponential(0, 3, 0), backoff.Linear(0, time.Second, 0), backoff.Linear(0, 0, 0),
		backoff.Linear(time.Second, 0, time.Second), backoff.Exponential(time.Second, 1, time.Second),
	} {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", s, err)
		}
		var back backoff.Schedule
		if err := json.Unmarshal(data, &back); err != nil || back != s {
			t.Errorf("round trip of %v through %s gave %v, %v", s, data, back, err)
		}
	}
}

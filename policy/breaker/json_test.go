package breaker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// sameSchedule compares backoff.Schedule values, whose fields are
// unexported, as == does.
var sameSchedule = cmp.Comparer(func(a, b backoff.Schedule) bool { return a == b })

func TestConfigJSONRoundTrip(t *testing.T) {
	full := breaker.Config{
		Name:             "payments",
		Threshold:        3,
		FailureRatio:     0.5,
		SlowCallRatio:    0.25,
		SlowCall:         2 * time.Second,
		TripIf:           func(breaker.Counts) bool { return false },
		WindowCalls:      20,
		WindowDuration:   time.Minute,
		WindowBuckets:    6,
		MinCalls:         10,
		Cooldown:         15 * time.Second,
		CooldownBackoff:  backoff.Exponential(time.Second, 2, time.Minute).WithJitter(backoff.Full),
		TrialTimeout:     90 * time.Second,
		MaxTrials:        2,
		SuccessThreshold: 3,
		Classify:         breaker.DefaultClassify,
		OnStateChange:    func(breaker.Transition) {},
		Clock:            clock.NewFake(),
		MaxKeys:          100,
	}
	data, err := json.Marshal(full)
	if err != nil {
		t.Fatalf("Marshal = %v", err)
	}
	// Every serialisable field, durations as Go duration strings, the
	// schedule as backoff.Schedule writes itself; TripIf, Classify,
	// OnStateChange and Clock skipped.
	const want = `{"Name":"payments","Threshold":3,"FailureRatio":0.5,"SlowCallRatio":0.25,"SlowCall":"2s",` +
		`"WindowCalls":20,"WindowDuration":"1m0s","WindowBuckets":6,"MinCalls":10,"Cooldown":"15s",` +
		`"CooldownBackoff":{"Kind":"exponential","Base":"1s","Multiplier":2,"Max":"1m0s","Jitter":"full"},` +
		`"TrialTimeout":"1m30s","MaxTrials":2,"SuccessThreshold":3,"MaxKeys":100}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var got breaker.Config
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("Unmarshal(%s) = %v", data, err)
	}
	full.TripIf, full.Classify, full.OnStateChange, full.Clock = nil, nil, nil, nil
	if diff := cmp.Diff(full, got, sameSchedule); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigJSONZeroAndOff(t *testing.T) {
	// The zero Config is {}: every field is its default.
	if data, err := json.Marshal(breaker.Config{}); err != nil || string(data) != "{}" {
		t.Errorf("Marshal(Config{}) = %s, %v; want {}", data, err)
	}
	// Off round-trips as -1.
	in := breaker.Config{Threshold: resilience.Off, FailureRatio: 0.5}
	data, err := json.Marshal(in)
	if err != nil || string(data) != `{"Threshold":-1,"FailureRatio":0.5}` {
		t.Fatalf("Marshal(%+v) = %s, %v", in, data, err)
	}
	var got breaker.Config
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got, sameSchedule); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigJSONReadsOverExistingFields(t *testing.T) {
	// Fields absent from the JSON (or null) keep their values.
	got := breaker.Config{Name: "kept", Cooldown: time.Second, MaxTrials: 4}
	if err := json.Unmarshal([]byte(`{"name":"db","cooldown":"5s","MaxTrials":null}`), &got); err != nil {
		t.Fatal(err)
	}
	want := breaker.Config{Name: "db", Cooldown: 5 * time.Second, MaxTrials: 4}
	if diff := cmp.Diff(want, got, sameSchedule); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigJSONErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"Thresold": 3}`, `breaker: Config: unknown field "Thresold"`},
		{`{"Classify": "default"}`, `breaker: Config: unknown field "Classify"`}, // skipped fields are not read either
		{`{"Cooldown": 30}`, `breaker: Config.Cooldown: a duration must be a string such as "250ms" or "off", got 30`},
		{`{"Cooldown": "soon"}`, `breaker: Config.Cooldown: time: invalid duration "soon"`},
		{`{"Threshold": "5"}`, `breaker: Config.Threshold: json: cannot unmarshal string into Go value of type int`},
		{`{"CooldownBackoff": {"Kind": "exponential", "Base": "1s", "Multiplier": 0.5, "Max": "1m"}}`,
			`breaker: Config.CooldownBackoff: backoff: Exponential multiplier must be >= 1, got 0.5`},
		{`{"CooldownBackoff": {"Kind": "fibonacci"}}`,
			`breaker: Config.CooldownBackoff: backoff: Schedule Kind must be "constant", "linear" or "exponential", got "fibonacci"`},
		{`[]`, `breaker: Config: a JSON object is expected, got array`},
	} {
		var cfg breaker.Config
		err := json.Unmarshal([]byte(c.in), &cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Unmarshal(%s) = %v, want an error starting %q", c.in, err, c.want)
		}
	}
	// What decodes is not necessarily valid: "off" is read for any
	// duration, and Validate rejects it where Off does not apply.
	var cfg breaker.Config
	if err := json.Unmarshal([]byte(`{"Cooldown": "off"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	const want = "breaker: Cooldown must be >= 0 (Off applies only to Threshold), got off"
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %q", err, want)
	}
}

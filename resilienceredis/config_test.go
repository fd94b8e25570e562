package resilienceredis

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

func TestLimiterConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    LimiterConfig
		want string
	}{
		{"valid", LimiterConfig{Name: "api", Rate: 10, Burst: 1}, ""},
		{"inf", LimiterConfig{Name: "api", Rate: math.Inf(1)}, ""},
		{"full", LimiterConfig{Name: "api", Rate: 1e6, Burst: 1 << 40, Prefix: "p:", MaxWait: time.Second, Timeout: time.Second,
			ProbeInterval: time.Second, FallbackRate: resilience.Off}, ""},
		// A zero Name, Rate or Burst means the constructor's argument,
		// which the constructor checks: the config is valid.
		{"no name", LimiterConfig{Rate: 1, Burst: 1}, ""},
		{"only a timeout", LimiterConfig{Timeout: 20 * time.Millisecond}, ""},
		{"no rate", LimiterConfig{Name: "a", Burst: 1}, ""},
		{"no burst", LimiterConfig{Name: "a", Rate: 1}, ""},
		{"not UTF-8", LimiterConfig{Name: "a\xff", Rate: 1, Burst: 1}, `resilienceredis: Name must be non-empty, valid UTF-8 and hold no '{' or '}', got "a\xff"`},
		{"brace", LimiterConfig{Name: "a{b", Rate: 1, Burst: 1}, `resilienceredis: Name must be non-empty, valid UTF-8 and hold no '{' or '}', got "a{b"`},
		{"prefix", LimiterConfig{Name: "a", Prefix: "}", Rate: 1, Burst: 1}, `resilienceredis: Prefix must hold no '{' or '}', got "}"`},
		{"negative rate", LimiterConfig{Name: "a", Rate: -1, Burst: 1}, "resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got -1"},
		{"fast", LimiterConfig{Name: "a", Rate: 2e6, Burst: 1}, "resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got 2e+06"},
		{"NaN", LimiterConfig{Name: "a", Rate: math.NaN(), Burst: 1}, "resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got NaN"},
		{"burst", LimiterConfig{Name: "a", Rate: 1, Burst: -1}, "resilienceredis: Burst must be in [1, 1<<40], got -1"},
		{"burst without a rate", LimiterConfig{Burst: 1<<40 + 1}, "resilienceredis: Burst must be in [1, 1<<40], got 1099511627777"},
		{"wait", LimiterConfig{Name: "a", Rate: 1, Burst: 1, MaxWait: -1}, "resilienceredis: MaxWait must be >= 0, got -1ns"},
		{"timeout", LimiterConfig{Name: "a", Rate: 1, Burst: 1, Timeout: -1}, "resilienceredis: Timeout must be >= 0 (0 means 50ms), got -1ns"},
		{"probe", LimiterConfig{Name: "a", Rate: 1, Burst: 1, ProbeInterval: -1}, "resilienceredis: ProbeInterval must be >= 0 (0 means 1s), got -1ns"},
		{"fallback", LimiterConfig{Name: "a", Rate: 1, Burst: 1, FallbackRate: -2}, "resilienceredis: FallbackRate must be in [0, 1e9], +Inf or Off (-1), got -2"},
		{"fallback burst", LimiterConfig{Name: "a", Rate: 1, Burst: 1, FallbackBurst: -1}, "resilienceredis: FallbackBurst must be in [0, 1<<40], got -1"},
	}
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			if nameProblem(tt.c.Name) != "" {
				return // the constructors' own check: TestConstructorsCheckArguments
			}
			defer func() {
				if r := recover(); tt.want == "" && r != nil || tt.want != "" && r != tt.want {
					t.Fatalf("NewLimiter panicked with %v, want %q", r, tt.want)
				}
			}()
			// The constructor's arguments: the config's, or valid ones
			// where it leaves them zero.
			name, rate, burst := orName(tt.c.Name, "a"), tt.c.Rate, tt.c.Burst
			if rate == 0 {
				rate = 1
			}
			if burst == 0 {
				burst = 1
			}
			NewLimiter(rdb, name, rate, burst, WithLimiterConfig(tt.c))
		})
	}
}

func TestBreakerConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		c    BreakerConfig
		want string
	}{
		{"default", BreakerConfig{Name: "svc"}, ""},
		{"no name: NewBreaker's", BreakerConfig{Threshold: 3}, ""},
		{"ratio only", BreakerConfig{Name: "svc", Threshold: resilience.Off, FailureRatio: 0.5}, ""},
		{"no rule", BreakerConfig{Name: "svc", Threshold: resilience.Off}, "resilienceredis: Threshold is Off and no ratio rule is on: the breaker could never trip"},
		{"name", BreakerConfig{Name: "s}"}, `resilienceredis: Name must be non-empty, valid UTF-8 and hold no '{' or '}', got "s}"`},
		{"threshold", BreakerConfig{Name: "svc", Threshold: -2}, "resilienceredis: Threshold must be in [0, 4294967295] or Off (-1), got -2"},
		{"ratio", BreakerConfig{Name: "svc", FailureRatio: 1.5}, "resilienceredis: FailureRatio must be in [0, 1], got 1.5"},
		{"slow ratio", BreakerConfig{Name: "svc", SlowCallRatio: 0.5}, "resilienceredis: SlowCall must be > 0 when SlowCallRatio is set, got 0s"},
		{"window", BreakerConfig{Name: "svc", WindowDuration: 5 * time.Millisecond}, "resilienceredis: WindowDuration must be at least 1ms per bucket (10 buckets), got 5ms"},
		{"buckets", BreakerConfig{Name: "svc", WindowBuckets: 101}, "resilienceredis: WindowBuckets must be in [0, 100], got 101"},
		{"cooldown", BreakerConfig{Name: "svc", Cooldown: -1}, "resilienceredis: Cooldown must be >= 0 (0 means 30s), got -1ns"},
		{"trials", BreakerConfig{Name: "svc", MaxTrials: -1}, "resilienceredis: MaxTrials must be >= 0 (0 means 1), got -1"},
		{"flush", BreakerConfig{Name: "svc", FlushInterval: 2 * time.Second}, "resilienceredis: FlushInterval must be in [0, 1s] (0 means 50ms), got 2s"},
		{"batch", BreakerConfig{Name: "svc", MaxBatch: -1}, "resilienceredis: MaxBatch must be >= 0 (0 means 100), got -1"},
	}
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			if nameProblem(tt.c.Name) != "" {
				return // the constructors' own check: TestConstructorsCheckArguments
			}
			defer func() {
				if r := recover(); tt.want == "" && r != nil || tt.want != "" && r != tt.want {
					t.Fatalf("NewBreaker panicked with %v, want %q", r, tt.want)
				}
			}()
			newBreaker(rdb, orName(tt.c.Name, "svc"), []BreakerOption{WithBreakerConfig(tt.c)}).Close()
		})
	}
}

// WithBreakerConfig and WithLimiterConfig set only the non-zero fields:
// they never erase New's arguments or an earlier option.
func TestWithConfigMerges(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	b := newBreaker(rdb, "svc", []BreakerOption{WithThreshold(7), WithBreakerConfig(BreakerConfig{Cooldown: time.Minute})})
	defer b.Close()
	if b.cfg.Name != "svc" || b.cfg.Threshold != 7 || b.cfg.Cooldown != time.Minute || b.cfg.TrialTimeout != time.Minute {
		t.Errorf("merged breaker config: name %q threshold %d cooldown %v trial timeout %v; want svc, 7, 1m, 1m",
			b.cfg.Name, b.cfg.Threshold, b.cfg.Cooldown, b.cfg.TrialTimeout)
	}
	l := NewLimiter(rdb, "api", 5, 2, WithMaxWait(time.Second), WithLimiterConfig(LimiterConfig{Timeout: time.Second}))
	if diff := cmp.Diff(LimiterConfig{Name: "api", Rate: 5, Burst: 2, MaxWait: time.Second, Timeout: time.Second}, l.p.cfg); diff != "" {
		t.Errorf("merged limiter config mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	bc := BreakerConfig{Name: "svc", Prefix: "p:", Threshold: resilience.Off, FailureRatio: 0.5, SlowCallRatio: 0.2,
		SlowCall: time.Second, WindowDuration: time.Minute, WindowBuckets: 6, MinCalls: 20, Cooldown: 10 * time.Second,
		TrialTimeout: 5 * time.Second, MaxTrials: 3, SuccessThreshold: 2, Timeout: 20 * time.Millisecond,
		FlushInterval: 30 * time.Millisecond, MaxBatch: 50, ProbeInterval: 2 * time.Second}
	data, err := json.Marshal(bc)
	if err != nil {
		t.Fatal(err)
	}
	var back BreakerConfig
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bc, back); diff != "" {
		t.Errorf("BreakerConfig JSON round trip mismatch (-want +got):\n%s\n%s", diff, data)
	}
	lc := LimiterConfig{Name: "api", Rate: math.Inf(1), Burst: 3, Prefix: "p:", MaxWait: time.Second, Timeout: time.Second,
		ProbeInterval: time.Minute, FallbackRate: 2.5, FallbackBurst: 4}
	if data, err = json.Marshal(lc); err != nil {
		t.Fatal(err)
	}
	var lback LimiterConfig
	if err := json.Unmarshal(data, &lback); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lc, lback); diff != "" {
		t.Errorf("LimiterConfig JSON round trip mismatch (-want +got):\n%s\n%s", diff, data)
	}
	if err := json.Unmarshal([]byte(`{"Nmae":"x"}`), &lback); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// A config struct does not override a constructor's required arguments:
// a non-zero Name, Rate or Burst that differs from the one given panics,
// naming both; one equal to it is accepted.
func TestWithConfigPositionalConflict(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	wantPanics(t, []panicCase{
		{"breaker name", func() { NewBreaker(rdb, "pos", WithBreakerConfig(BreakerConfig{Name: "cfg"})).Close() },
			`resilienceredis: NewBreaker(rdb, "pos", ...): WithBreakerConfig's Name "cfg" differs from the name given`},
		{"limiter name", func() { NewLimiter(rdb, "pos", 5, 2, WithLimiterConfig(LimiterConfig{Name: "cfg"})) },
			`resilienceredis: NewLimiter(rdb, "pos", 5, 2, ...): WithLimiterConfig's Name "cfg" differs from the name given`},
		{"limiter rate", func() { NewLimiter(rdb, "pos", 5, 2, WithLimiterConfig(LimiterConfig{Rate: 7})) },
			`resilienceredis: NewLimiter(rdb, "pos", 5, 2, ...): WithLimiterConfig's Rate 7 differs from the rate given`},
		{"keyed burst", func() { NewKeyedLimiter(rdb, "pos", 5, 2, WithLimiterConfig(LimiterConfig{Burst: 3})) },
			`resilienceredis: NewKeyedLimiter(rdb, "pos", 5, 2, ...): WithLimiterConfig's Burst 3 differs from the burst given`},
		{"budget name", func() { NewRetryBudget(rdb, "pos", WithRetryBudgetConfig(RetryBudgetConfig{Name: "cfg"})).Close() },
			`resilienceredis: NewRetryBudget(rdb, "pos", ...): WithRetryBudgetConfig's Name "cfg" differs from the name given`},
		{"rate NaN given, another in the config", func() { NewLimiter(rdb, "pos", math.NaN(), 2, WithLimiterConfig(LimiterConfig{Rate: 7})) },
			`resilienceredis: NewLimiter(rdb, "pos", NaN, 2, ...): WithLimiterConfig's Rate 7 differs from the rate given`},
		{"rate NaN in the config, another given", func() { NewLimiter(rdb, "pos", 5, 2, WithLimiterConfig(LimiterConfig{Rate: math.NaN()})) },
			`resilienceredis: NewLimiter(rdb, "pos", 5, 2, ...): WithLimiterConfig's Rate NaN differs from the rate given`},
		{"rate NaN in both: Validate says why", func() { NewLimiter(rdb, "pos", math.NaN(), 2, WithLimiterConfig(LimiterConfig{Rate: math.NaN()})) },
			`resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got NaN`},
		{"equal values", func() {
			NewBreaker(rdb, "pos", WithBreakerConfig(BreakerConfig{Name: "pos"})).Close()
			NewLimiter(rdb, "pos", 5, 2, WithLimiterConfig(LimiterConfig{Name: "pos", Rate: 5, Burst: 2}))
			NewRetryBudget(rdb, "pos", WithRetryBudgetConfig(RetryBudgetConfig{Name: "pos"})).Close()
		}, ""},
	})
}

// A panicCase is a call f and the panic it must make (want), or "" for
// none.
type panicCase struct {
	name string
	f    func()
	want string
}

// wantPanics runs each case's call as a subtest and checks its panic.
func wantPanics(t *testing.T, cases []panicCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if diff := cmp.Diff(tt.want, fmt.Sprint(r)); tt.want == "" && r != nil || tt.want != "" && diff != "" {
					t.Errorf("panic mismatch (-want +got):\n%s", diff)
				}
			}()
			tt.f()
		})
	}
}

// A constructor's own name, rate and burst are checked as a whole
// configuration is: a zero rate or burst given to NewLimiter panics with
// the message of the field, though a config may leave them zero.
func TestLimiterArgumentsChecked(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	wantPanics(t, []panicCase{
		{"zero rate", func() { NewLimiter(rdb, "a", 0, 1) }, "resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got 0"},
		{"zero burst", func() { NewKeyedLimiter(rdb, "a", 1, 0) }, "resilienceredis: Burst must be in [1, 1<<40], got 0"},
		{"zero rate, config without one", func() { NewLimiter(rdb, "a", 0, 1, WithLimiterConfig(LimiterConfig{Timeout: time.Second})) },
			"resilienceredis: Rate must be in [2.220446049250313e-10, 1e6] events per second (an interval 1/Rate of at most 2^52µs, about 142 years) or +Inf, got 0"},
	})
}

// A JSON error names the config's type and field as a user knows them.
func TestConfigJSONErrorsNameTheField(t *testing.T) {
	for _, tt := range []struct {
		name string
		into any
		in   string
		want string
	}{
		{"limiter field", new(LimiterConfig), `{"Rate": "fast"}`, `resilienceredis: LimiterConfig.Rate: a number, "+Inf" or "-Inf", got "fast"`},
		{"limiter unknown", new(LimiterConfig), `{"Rat": 1}`, `resilienceredis: LimiterConfig: unknown field "Rat"`},
		{"limiter not an object", new(LimiterConfig), `[1]`, `resilienceredis: LimiterConfig: a JSON object is expected, got array`},
		{"breaker field", new(BreakerConfig), `{"Cooldown": 5}`, `resilienceredis: BreakerConfig.Cooldown: a duration must be a string such as "250ms" or "off", got 5`},
		{"breaker twice", new(BreakerConfig), `{"Threshold": 1, "Threshold": 2}`, `resilienceredis: BreakerConfig: the key "Threshold" appears twice`},
		{"budget field", new(RetryBudgetConfig), `{"Ratio": "x"}`, `resilienceredis: RetryBudgetConfig.Ratio: a number, "+Inf" or "-Inf", got "x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := "<nil>"
			if err := json.Unmarshal([]byte(tt.in), tt.into); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("json.Unmarshal(%s) error mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// orName returns name, or def if name is "": the constructor's name for a
// config that leaves its Name to it.
func orName(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

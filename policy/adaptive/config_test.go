package adaptive_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		c    adaptive.Config
		want string
	}{
		{"zero: every default", adaptive.Config{}, ""},
		{"full", fullConfig(), ""},
		{"largest", adaptive.Config{Min: 2097151, Max: 2097151, MaxQueue: 2097151}, ""},
		{"Min above the default Max: Max follows", adaptive.Config{Min: 5000}, ""},
		{"negative Min", adaptive.Config{Min: -1}, "adaptive: Min must be between 1 and 2097151, or 0 for the default 1, got -1"},
		{"Max too large", adaptive.Config{Max: 1 << 21}, "adaptive: Max must be between 1 and 2097151, or 0 for the default 1000, got 2097152"},
		{"Max below Min", adaptive.Config{Min: 10, Max: 5}, "adaptive: Max must be >= Min, got Max 5 and Min 10"},
		{"Max below the default Min", adaptive.Config{Max: 5}, ""},
		{"Initial below Min", adaptive.Config{Min: 10, Initial: 5}, "adaptive: Initial must be between Min and Max (10 and 1000), or 0 for the default, got 5"},
		{"Initial above Max", adaptive.Config{Max: 10, Initial: 11}, "adaptive: Initial must be between Min and Max (1 and 10), or 0 for the default, got 11"},
		{"negative Initial", adaptive.Config{Initial: -1}, "adaptive: Initial must be between Min and Max (1 and 1000), or 0 for the default, got -1"},
		{"negative Window", adaptive.Config{Window: -time.Second}, "adaptive: Window must be > 0, or 0 for the default 100ms, got -1s"},
		{"huge Window", adaptive.Config{Window: 1 << 62}, "adaptive: Window must be at most 256204h46m43.68547758s, got 1281023h53m38.427387904s"},
		{"negative MinSamples", adaptive.Config{MinSamples: -2}, "adaptive: MinSamples must be >= 1, or 0 for the default 10, got -2"},
		{"negative MaxLatency", adaptive.Config{MaxLatency: -1}, "adaptive: MaxLatency must be > 0, or 0 for none, got -1ns"},
		{"BaselineMemory Off", adaptive.Config{BaselineMemory: resilience.Off}, ""},
		{"negative BaselineMemory", adaptive.Config{BaselineMemory: -time.Second}, "adaptive: BaselineMemory must be > 0, 0 for the default 10m, or Off (-1) for ever, got -1s"},
		{"negative MaxQueue", adaptive.Config{MaxQueue: -1}, "adaptive: MaxQueue must be between 0 (no queue) and 2097151, got -1"},
		{"negative MaxWait", adaptive.Config{MaxQueue: 1, MaxWait: -time.Second}, "adaptive: MaxWait must be >= 0 (0 means no limit), got -1s"},
		{"MaxWait without a queue", adaptive.Config{MaxWait: time.Second}, "adaptive: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
		{"Reserve 1", adaptive.Config{Reserve: 1}, "adaptive: Reserve must be in [0, 1), got 1"},
		{"negative Reserve", adaptive.Config{Reserve: -0.1}, "adaptive: Reserve must be in [0, 1), got -0.1"},
		{"Gradient2 Tolerance below 1", adaptive.Config{Algorithm: adaptive.Gradient2{Tolerance: 0.5}},
			"adaptive: Algorithm Gradient2.Tolerance must be finite and >= 1, or 0 for the default 1.1, got 0.5"},
		{"Gradient2 Smoothing above 1", adaptive.Config{Algorithm: adaptive.Gradient2{Smoothing: 2}},
			"adaptive: Algorithm Gradient2.Smoothing must be in (0, 1], or 0 for the default 0.2, got 2"},
		{"AIMD Backoff 1", adaptive.Config{Algorithm: adaptive.AIMD{Backoff: 1}},
			"adaptive: Algorithm AIMD.Backoff must be in (0, 1), or 0 for the default 0.9, got 1"},
		{"AIMD Tolerance negative", adaptive.Config{Algorithm: adaptive.AIMD{Tolerance: -1}},
			"adaptive: Algorithm AIMD.Tolerance must be finite and >= 1, or 0 for the default 1.1, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Validate() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, panicOf(func() { adaptive.New(adaptive.WithConfig(tt.c)) })); diff != "" {
				t.Fatalf("New panic mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPanics(t *testing.T) {
	if diff := cmp.Diff("adaptive: New option must not be nil", panicOf(func() { adaptive.New(nil) })); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("adaptive: Max must be >= Min, got Max 5 and Min 10", panicOf(func() { adaptive.New(adaptive.WithConfig(adaptive.Config{Min: 10, Max: 5})) })); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		opts []adaptive.Option
		want int // the initial limit
	}{
		{nil, 20},
		{[]adaptive.Option{adaptive.WithConfig(adaptive.Config{Min: 30})}, 30},
		{[]adaptive.Option{adaptive.WithConfig(adaptive.Config{Max: 8})}, 8},
		{[]adaptive.Option{adaptive.WithConfig(adaptive.Config{Min: 5000})}, 5000},
		{[]adaptive.Option{adaptive.WithInitial(7)}, 7},
	}
	for _, tt := range tests {
		if got := adaptive.New(tt.opts...).Stats().Limit; got != tt.want {
			t.Errorf("%d options: initial limit %d, want %d", len(tt.opts), got, tt.want)
		}
	}
}

// WithConfig sets only the fields that are not zero; options apply in
// order, the last one to set a field winning.
func TestOptionsApplyInOrder(t *testing.T) {
	tests := []struct {
		name string
		opts []adaptive.Option
		want string // the refusal after the initial limit is taken
		n    int    // the initial limit
	}{
		{"name twice", []adaptive.Option{adaptive.WithName("a"), adaptive.WithName("b")}, "adaptive: full (b)", 20},
		{"a Config without a name keeps the option's", []adaptive.Option{adaptive.WithName("early"), adaptive.WithInitial(3),
			adaptive.WithConfig(adaptive.Config{Max: 50})}, "adaptive: full (early)", 3},
		{"a Config's fields replace earlier options'", []adaptive.Option{adaptive.WithName("early"), adaptive.WithInitial(3),
			adaptive.WithConfig(adaptive.Config{Name: "cfg", Initial: 5})}, "adaptive: full (cfg)", 5},
		{"options after a Config replace its fields", []adaptive.Option{adaptive.WithConfig(adaptive.Config{Name: "cfg", Initial: 5}),
			adaptive.WithName("late"), adaptive.WithInitial(2)}, "adaptive: full (late)", 2},
	}
	for _, tt := range tests {
		lim := adaptive.New(tt.opts...)
		hold(t, lim, tt.n)
		_, err := lim.Acquire(t.Context())
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: refusal %v, want %q", tt.name, err, tt.want)
		}
	}
}

func fullConfig() adaptive.Config {
	return adaptive.Config{
		Algorithm: adaptive.Vegas{}, Min: 2, Max: 300, Initial: 10, Window: 500 * time.Millisecond, MinSamples: 20,
		MaxLatency: 2 * time.Second, BaselineMemory: resilience.Off, MaxQueue: 16, MaxWait: 50 * time.Millisecond,
		Reserve: 0.2, Name: "search", Clock: clock.NewFake(),
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	c := fullConfig()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Min":2,"Max":300,"Initial":10,"Window":"500ms","MinSamples":20,"MaxLatency":"2s","BaselineMemory":"off","MaxQueue":16,"MaxWait":"50ms","Reserve":0.2,"Name":"search"}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Fatalf("MarshalJSON mismatch (-want +got):\n%s", diff)
	}
	var got adaptive.Config
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	c.Algorithm, c.Clock = nil, nil // not serialised
	if diff := cmp.Diff(c, got); diff != "" {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
	b, err = json.Marshal(adaptive.Config{})
	if err != nil || string(b) != "{}" {
		t.Fatalf("the zero Config: %s, %v; want {}", b, err)
	}
}

func TestConfigJSONErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"Window":250}`:       `adaptive: Config.Window: a duration must be a string such as "250ms" or "off", got 250`,
		`{"Winodw":"1s"}`:      `adaptive: Config: unknown field "Winodw"`,
		`{"Algorithm":"aimd"}`: `adaptive: Config: unknown field "Algorithm"`,
		`{"Min":"two"}`:        `adaptive: Config.Min: json: cannot unmarshal string into Go value of type int`,
	} {
		var c adaptive.Config
		err := json.Unmarshal([]byte(in), &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s): %v, want %q", in, err, want)
		}
	}
}

// An option given 0 (or a value 0 would stand for) panics naming itself and
// the value: a zero means "the default" only in a Config.
func TestOptionsPanicOnZero(t *testing.T) {
	tests := []struct {
		f    func()
		want string
	}{
		{func() { adaptive.WithMinLimit(0) }, "adaptive: WithMinLimit(0): the bound must be between 1 and 2097151"},
		{func() { adaptive.WithMaxLimit(0) }, "adaptive: WithMaxLimit(0): the bound must be between 1 and 2097151"},
		{func() { adaptive.WithMaxLimit(1 << 21) }, "adaptive: WithMaxLimit(2097152): the bound must be between 1 and 2097151"},
		{func() { adaptive.New(adaptive.WithMinLimit(9), adaptive.WithMaxLimit(8)) }, "adaptive: Max must be >= Min, got Max 8 and Min 9"},
		{func() { adaptive.WithInitial(0) }, "adaptive: WithInitial(0): the initial limit must be >= 1"},
		{func() { adaptive.WithWindowDuration(0) }, "adaptive: WithWindowDuration(0s): the window must be > 0"},
		{func() { adaptive.WithWindowCalls(0) }, "adaptive: WithWindowCalls(0): a window must need >= 1 calls"},
		{func() { adaptive.WithMaxLatency(0) }, "adaptive: WithMaxLatency(0s): the latency must be > 0"},
		{func() { adaptive.WithBaselineMemory(0) }, "adaptive: WithBaselineMemory(0s): the memory must be > 0, or resilience.Off"},
		{func() { adaptive.WithBaselineMemory(-2) }, "adaptive: WithBaselineMemory(-2ns)"},
		{func() { adaptive.WithMaxWait(0) }, "adaptive: WithMaxWait(0s): the wait must be > 0"},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, tt.want) {
					t.Errorf("panic %q, want one starting %q", msg, tt.want)
				}
			}()
			tt.f()
		}()
	}
	// The values they state are taken.
	l := adaptive.New(adaptive.WithMinLimit(2), adaptive.WithMaxLimit(9), adaptive.WithInitial(3), adaptive.WithBaselineMemory(resilience.Off))
	if got := l.Stats().Limit; got != 3 {
		t.Errorf("initial limit %d, want 3", got)
	}
}

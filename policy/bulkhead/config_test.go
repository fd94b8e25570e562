package bulkhead_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		c    bulkhead.Config
		want string
	}{
		{"zero: every default, MaxConcurrent from New", bulkhead.Config{}, ""},
		{"valid", bulkhead.Config{MaxConcurrent: 1}, ""},
		{"valid with queue and wait", bulkhead.Config{MaxConcurrent: 1, MaxQueue: 3, MaxWait: time.Second}, ""},
		{"largest", bulkhead.Config{MaxConcurrent: 1<<31 - 1, MaxQueue: 1<<31 - 1}, ""},
		{"negative slots", bulkhead.Config{MaxConcurrent: -3},
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got -3"},
		{"Off slots", bulkhead.Config{MaxConcurrent: -1},
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got -1"},
		{"too many slots", bulkhead.Config{MaxConcurrent: 1 << 31},
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got 2147483648"},
		{"negative queue", bulkhead.Config{MaxQueue: -2},
			"bulkhead: MaxQueue must be between 0 (no queue) and 2147483647, got -2"},
		{"Off queue", bulkhead.Config{MaxQueue: -1},
			"bulkhead: MaxQueue must be between 0 (no queue) and 2147483647, got -1"},
		{"queue too long", bulkhead.Config{MaxQueue: 1 << 31},
			"bulkhead: MaxQueue must be between 0 (no queue) and 2147483647, got 2147483648"},
		{"negative wait", bulkhead.Config{MaxQueue: 1, MaxWait: -time.Second},
			"bulkhead: MaxWait must be >= 0 (0 means no limit), got -1s"},
		{"Off wait", bulkhead.Config{MaxQueue: 1, MaxWait: -1},
			"bulkhead: MaxWait must be >= 0 (0 means no limit), got off"},
		{"wait without queue", bulkhead.Config{MaxWait: time.Second},
			"bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
		{"1ns wait without queue", bulkhead.Config{MaxWait: time.Nanosecond},
			"bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			// New, given a valid argument, panics with the same message.
			if diff := cmp.Diff(tt.want, panicOf(func() { bulkhead.New(2, bulkhead.WithConfig(tt.c)) })); diff != "" {
				t.Fatalf("New panic mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

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

// New validates the configuration its arguments and options build: its
// own MaxConcurrent, unless a Config or option sets another, must be valid.
func TestNewValidatesWhatItBuilds(t *testing.T) {
	tests := []struct {
		name  string
		build func()
		want  string
	}{
		{"zero argument", func() { bulkhead.New(0) },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got 0"},
		{"negative argument", func() { bulkhead.New(-1) },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got -1"},
		{"zero argument, a Config without MaxConcurrent", func() { bulkhead.New(0, bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1})) },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got 0"},
		{"zero argument, a Config sets it", func() { bulkhead.New(0, bulkhead.WithConfig(bulkhead.Config{MaxConcurrent: 3})) }, ""},
		{"MaxWait from an option, queue from a Config", func() {
			bulkhead.New(1, bulkhead.WithMaxWait(time.Second), bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1}))
		}, ""},
		{"MaxWait, the queue switched off again", func() {
			bulkhead.New(1, bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1, MaxWait: time.Second}), bulkhead.WithMaxQueue(0))
		}, "bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
		{"negative option", func() { bulkhead.New(1, bulkhead.WithMaxQueue(-1)) },
			"bulkhead: MaxQueue must be between 0 (no queue) and 2147483647, got -1"},
		{"nil option", func() { bulkhead.New(1, nil) }, "bulkhead: New option must not be nil"},
		{"name not UTF-8", func() { bulkhead.WithName("x\xff") }, `bulkhead: WithName("x\xff"): name must be valid UTF-8`},
		{"nil clock", func() { bulkhead.WithClock(nil) }, "bulkhead: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, panicOf(tt.build)); diff != "" {
			t.Errorf("%s: panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// WithMaxWait(0) silently meant "no limit": it panics naming the value.
func TestWithMaxWaitZeroPanics(t *testing.T) {
	want := "bulkhead: WithMaxWait(0s): the wait must be > 0; leave the option out for no limit but the context's deadline"
	got := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		bulkhead.WithMaxWait(0)
		return "no panic"
	}()
	if got != want {
		t.Errorf("WithMaxWait(0) panicked with %q, want %q", got, want)
	}
}

func TestOptionsApplyInOrder(t *testing.T) {
	fake := clock.NewFake()
	base := bulkhead.Config{MaxConcurrent: 2, MaxQueue: 7, Name: "cfg", Clock: fake}
	tests := []struct {
		name string
		opts []bulkhead.Option
		want string // refusal after the first two slots are taken
	}{
		{"name", []bulkhead.Option{bulkhead.WithName("a"), bulkhead.WithName("b")}, "bulkhead: full (b)"},
		{"config then option", []bulkhead.Option{bulkhead.WithConfig(base), bulkhead.WithName("late"), bulkhead.WithMaxQueue(0)},
			"bulkhead: full (late)"},
		{"option then config", []bulkhead.Option{bulkhead.WithName("early"), bulkhead.WithConfig(base), bulkhead.WithMaxQueue(0)},
			"bulkhead: full (cfg)"},
		{"a Config without a name keeps the option's", []bulkhead.Option{bulkhead.WithName("early"), bulkhead.WithConfig(bulkhead.Config{MaxConcurrent: 2})},
			"bulkhead: full (early)"},
	}
	for _, tt := range tests {
		// In a bubble: if an option failed to remove the queue, Acquire
		// would wait, and the bubble reports that at once.
		bubble(t, func(t *testing.T) {
			b := bulkhead.New(2, tt.opts...)
			if first, second := b.TryAcquire(), b.TryAcquire(); !first || !second {
				t.Fatalf("%s: could not take 2 slots", tt.name)
			}
			err := b.Acquire(t.Context())
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Fatalf("%s: mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// slots counts the slots b gives with nobody holding one, and gives them
// back.
func slots(b *bulkhead.Bulkhead) int {
	n := 0
	for b.TryAcquire() {
		n++
	}
	for range n {
		b.Release()
	}
	return n
}

// WithConfig sets only the Config's non-zero fields: it keeps New's
// argument, earlier options and the defaults.
func TestWithConfigMerges(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(5, bulkhead.WithName("db"), bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1}))
		if got := slots(b); got != 5 {
			t.Fatalf("New(5, WithConfig(Config{MaxQueue: 1})): %d slots, want New's 5", got)
		}
		for range 5 {
			_ = b.TryAcquire()
		}
		ctx, cancel := context.WithCancel(t.Context())
		queued := acquire(ctx, b)
		if diff := cmp.Diff([]string{"waiting", "bulkhead: full (db)"}, []string{result(queued), result(acquire(t.Context(), b))}); diff != "" {
			t.Fatalf("a queue of 1 and the option's name: mismatch (-want +got):\n%s", diff)
		}
		cancel()
		synctest.Wait()
		if got := result(queued); got != context.Canceled.Error() {
			t.Fatalf("queued caller: %s", got)
		}
	})

	// A Config's MaxConcurrent replaces New's argument.
	if got := slots(bulkhead.New(1, bulkhead.WithConfig(bulkhead.Config{MaxConcurrent: 3}))); got != 3 {
		t.Fatalf("WithConfig(Config{MaxConcurrent: 3}): %d slots, want 3", got)
	}
	// The zero Config changes nothing.
	if got := slots(bulkhead.New(4, bulkhead.WithConfig(bulkhead.Config{}))); got != 4 {
		t.Fatalf("WithConfig(Config{}): %d slots, want 4", got)
	}
}

// A full Config goes to JSON and back unchanged, but for the clock, which is
// not serialised.
func TestConfigJSONRoundTrip(t *testing.T) {
	in := bulkhead.Config{MaxConcurrent: 8, MaxQueue: 16, MaxWait: 250 * time.Millisecond, Name: "db", Clock: clock.NewFake()}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"MaxConcurrent":8,"MaxQueue":16,"MaxWait":"250ms","Name":"db"}`
	if diff := cmp.Diff(wantJSON, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var out bulkhead.Config
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	in.Clock = nil
	if diff := cmp.Diff(in, out, cmpopts.EquateComparable()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if data, err := json.Marshal(bulkhead.Config{}); err != nil || string(data) != "{}" {
		t.Errorf("Marshal(Config{}) = %s, %v; want {}", data, err)
	}
}

func TestConfigJSONErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"MaxConcurent": 8}`, `bulkhead: Config: unknown field "MaxConcurent"`},
		{`{"Clock": "real"}`, `bulkhead: Config: unknown field "Clock"`},
		{`{"MaxWait": 100}`, `bulkhead: Config.MaxWait: a duration must be a string such as "250ms" or "off", got 100`},
		{`{"MaxWait": "soon"}`, `bulkhead: Config.MaxWait: time: invalid duration "soon"`},
		{`{"MaxQueue": "8"}`, `bulkhead: Config.MaxQueue: json: cannot unmarshal`},
	}
	for _, tt := range tests {
		var c bulkhead.Config
		err := json.Unmarshal([]byte(tt.in), &c)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error starting %q", tt.in, err, tt.want)
		}
	}
}

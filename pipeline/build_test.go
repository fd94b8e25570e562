package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
)

// tagKind is a layer kind of the tests: {"kind": "tag", "config": "x"}
// appends "x" to log after the rest of the chain returns.
func tagKind(log func(string)) pipeline.Option {
	return pipeline.WithKind("tag", func(config json.RawMessage) (resilience.Policy[int], error) {
		var tag string
		if err := json.Unmarshal(config, &tag); err != nil || tag == "" {
			return resilience.Policy[int]{}, fmt.Errorf("tag: the config must be a non-empty string, got %s", config)
		}
		return resilience.New("tag("+tag+")", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			v, err := next.Call(ctx)
			log(tag)
			return v, err
		}), nil
	})
}

func TestBuildErrorsNameTheirPath(t *testing.T) {
	for _, tc := range []struct {
		doc, path, msg string
	}{
		{`{"pipelines": {"pricing": [{"kind": "retry"}, {"kind": "retry"}, {"kind": "timeout", "config": {"Duration": "-1s"}}]}}`,
			"pipelines.pricing[2].config.Duration", "timeout: Duration must be > 0"},
		{`{"pipelines": {"pricing": [{"kind": "timeout", "config": {}}]}}`,
			"pipelines.pricing[0].config.Duration", "timeout: Duration must be set"},
		{`{"guards": {"b": {"kind": "breaker", "config": {"Threshold": -3}}}}`,
			"guards.b.config.Threshold", "breaker: Threshold must be in"},
		{`{"guards": {"b": {"kind": "breaker", "config": {"Threshold": "x"}}}}`,
			"guards.b.config.Threshold", "breaker: Config.Threshold"},
		{`{"guards": {"b": {"kind": "breaker", "config": {"Treshold": 3}}}}`,
			"guards.b.config.Treshold", `unknown field "Treshold"`},
		{`{"pipelines": {"p": [{"kind": "retry", "config": {"Backoff": {"Kind": "constant", "Bse": "1s"}}}]}}`,
			"pipelines.p[0].config.Backoff.Bse", `unknown field "Bse"`},
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Burst": 3}}}}`,
			"guards.l.config.Rate", "ratelimit: Rate must be set"},
		{`{"guards": {"l": {"kind": "ratelimit", "config": {"Rate": 3}}}}`,
			"guards.l.config.Burst", "ratelimit: Burst must be >= 1"},
		{`{"guards": {"h": {"kind": "bulkhead", "config": {"MaxQueue": 3}}}}`,
			"guards.h.config.MaxConcurrent", "bulkhead: MaxConcurrent must be set"},
		{`{"guards": {"x": {"kind": "retry"}}}`,
			"guards.x.kind", "retry is not a guard kind"},
		{`{"guards": {"x": {"kind": "fuse"}}}`,
			"guards.x.kind", `unknown guard kind "fuse"`},
		{`{"pipelines": {"p": [{"kind": "retry"}, {"guard": "nope"}]}}`,
			"pipelines.p[1].guard", `no guard named "nope"`},
		{`{"pipelines": {"p": [{"kind": "breaker"}]}}`,
			"pipelines.p[0].kind", "breaker is a guard"},
		{`{"pipelines": {"p": [{"kind": "retyr"}]}}`,
			"pipelines.p[0].kind", `unknown layer kind "retyr" (hedge, retry, timeout, tag)`},
		{`{"pipelines": {"p": [{}]}}`,
			"pipelines.p[0].kind", "a layer needs a kind"},
		{`{"guards": {"b": {"kind": "breaker"}}, "pipelines": {"p": [{"guard": "b", "kind": "retry"}]}}`,
			"pipelines.p[0]", "not both"},
		{`{"pipelines": {"p": [{"kind": "retry", "config": {"Attempts": -2}}]}}`,
			"pipelines.p[0].config.Attempts", "retry: Attempts must be"},
		{`{"pipelines": {"p": [{"kind": "tag", "config": 3}]}}`,
			"pipelines.p[0].config", "tag: the config must be"},
		{`{"pipelines": {"a.b": [{"kind": "tag", "config": ""}]}}`,
			`pipelines["a.b"][0].config`, "tag: the config must be"},
		// The form, checked by Parse.
		{`{"guardz": {}}`, "guardz", "pipeline: unknown field"},
		{`{"pipelines": {"p": [{"gaurd": "b"}]}}`, "pipelines.p[0].gaurd", "pipeline: unknown field"},
		{`{"pipelines": {"p": {"kind": "retry"}}}`, "pipelines.p", "a JSON array of layers"},
		{`{"guards": {"b": {"kind": 3}}}`, "guards.b.kind", "a string is expected"},
		{`[]`, "$", "a JSON object is expected"},
	} {
		_, err := build(tc.doc, tagKind(func(string) {}))
		var pe *pipeline.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *pipeline.Error", tc.doc, err)
			continue
		}
		if pe.Path != tc.path || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), tc.path+": ") {
			t.Errorf("%s:\n error %q\n path %q, want path %q and a message with %q", tc.doc, err, pe.Path, tc.path, tc.msg)
		}
	}
}

func build(doc string, opts ...pipeline.Option) (pipeline.Pipelines[int], error) {
	d, err := pipeline.Parse([]byte(doc))
	if err != nil {
		return pipeline.Pipelines[int]{}, err
	}
	return pipeline.Build[int](d, opts...)
}

func TestSharedGuardIsOne(t *testing.T) {
	const doc = `{
		"guards": {"shared": {"kind": "breaker", "config": {"Threshold": 2, "Cooldown": "1m"}}},
		"pipelines": {
			"a": [{"guard": "shared"}],
			"b": [{"kind": "timeout", "config": {"Duration": "1s"}}, {"guard": "shared"}]
		}}`
	ps, err := build(doc, pipeline.WithClock(clock.NewFake()))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := ps.Guards["shared"].(*breaker.Breaker)
	if !ok {
		t.Fatalf("Guards[shared] = %T, want *breaker.Breaker", ps.Guards["shared"])
	}
	if got, want := b.Name(), "shared"; got != want {
		t.Errorf("Name() = %q, want the document's name %q", got, want)
	}
	fail := func(context.Context) (int, error) { return 0, errors.New("down") }
	// One failure through each pipeline: two in a row for the one breaker.
	ps.Policies["a"].Do(context.Background(), fail)
	ps.Policies["b"].Do(context.Background(), fail)
	if s := b.State(); s != breaker.Open {
		t.Fatalf("breaker after one failure through each pipeline = %v, want open (threshold 2, one breaker)", s)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := ps.Policies[name].Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, breaker.ErrOpen) {
			t.Errorf("call through %s = %v, want ErrOpen", name, err)
		}
	}
	if got, want := ps.Policies["b"].String(), "timeout(1s) > breaker(shared)"; got != want {
		t.Errorf("pipeline b = %q, want %q", got, want)
	}
}

func TestBuildRegistersGuards(t *testing.T) {
	r := telemetry.NewRegistry()
	_, err := build(`{"guards": {
		"b": {"kind": "breaker"},
		"h": {"kind": "bulkhead", "config": {"MaxConcurrent": 2}},
		"l": {"kind": "ratelimit", "config": {"Rate": 5, "Burst": 1, "Name": "limit"}}}}`, pipeline.WithRegistry(r))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Snapshots() {
		got = append(got, string(s.Kind)+" "+s.Name)
	}
	want := []string{"breaker b", "bulkhead h", "ratelimit limit"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registered guards mismatch (-want +got):\n%s", diff)
	}
}

func TestWithKindOfAnotherTypePanics(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), `WithKind("tag")`) {
			t.Errorf("panic = %v, want one naming WithKind(\"tag\")", r)
		}
	}()
	pipeline.NewSet[string](tagKind(func(string) {}))
}

func TestWithKindOfABuiltInKindPanics(t *testing.T) {
	for _, kind := range []string{"retry", "breaker", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithKind(%q) did not panic", kind)
				}
			}()
			pipeline.WithKind(kind, func(json.RawMessage) (resilience.Policy[int], error) { return resilience.Policy[int]{}, nil })
		}()
	}
}

func TestBuildGivesClockAndObserver(t *testing.T) {
	clk := clock.NewFake()
	var mu sync.Mutex
	var events []telemetry.Type
	obs := telemetry.ObserverFunc(func(e telemetry.Event) { mu.Lock(); events = append(events, e.Type); mu.Unlock() })
	ps, err := build(`{"guards": {"b": {"kind": "breaker", "config": {"Threshold": 1, "Cooldown": "10s"}}},
		"pipelines": {"p": [{"guard": "b"}]}}`, pipeline.WithClock(clk), pipeline.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	b := ps.Guards["b"].(*breaker.Breaker)
	ps.Policies["p"].Do(context.Background(), func(context.Context) (int, error) { return 0, errors.New("down") })
	if b.State() != breaker.Open {
		t.Fatalf("breaker = %v after a failure with threshold 1, want open", b.State())
	}
	clk.Advance(10 * time.Second)
	if b.State() != breaker.HalfOpen {
		t.Errorf("breaker = %v after the fake clock passed the cooldown, want half-open", b.State())
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(events, breaker.EventOpened) {
		t.Errorf("events = %v, want one of type %v", events, breaker.EventOpened)
	}
}

func TestRateLimitWaitsOnlyWithMaxWait(t *testing.T) {
	ps, err := build(`{"guards": {
		"now": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}},
		"wait": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1, "MaxWait": "2s"}}},
		"pipelines": {"now": [{"guard": "now"}], "wait": [{"guard": "wait"}]}}`, pipeline.WithClock(clock.NewFake()))
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Duration
	for _, name := range []string{"now", "wait"} {
		got = append(got, ps.Policies[name].Layers()[0].MaxWait)
	}
	if diff := cmp.Diff([]time.Duration{0, 2 * time.Second}, got); diff != "" {
		t.Errorf("layers' MaxWait mismatch (-want +got):\n%s", diff)
	}
}

func TestNullConfigIsAbsent(t *testing.T) {
	ps, err := build(`{"guards": {"b": {"kind": "breaker", "config": null}},
		"pipelines": {"p": [{"guard": "b", "config": null}, {"kind": "retry", "config": null}]}}`)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if got, want := ps.Policies["p"].String(), "breaker(b) > retry"; got != want {
		t.Errorf("pipeline = %q, want %q", got, want)
	}
}

// A key a config does not have, at any depth, matches ErrUnknownField, as a
// key the document does not have does.
func TestUnknownConfigFieldMatchesErrUnknownField(t *testing.T) {
	for _, doc := range []string{
		`{"guards": {"b": {"kind": "breaker", "config": {"Cooldwn": "1s"}}}}`,
		`{"pipelines": {"p": [{"kind": "retry", "config": {"Backoff": {"Kind": "constant", "Bse": "1s"}}}]}}`,
		`{"guardz": {}}`,
	} {
		if _, err := build(doc); !errors.Is(err, pipeline.ErrUnknownField) {
			t.Errorf("%s: error %v, want one matching ErrUnknownField", doc, err)
		}
	}
}

// A key given twice in one object is an error at its path, in the document
// and in a config, where encoding/json would keep the last silently.
func TestDuplicateKeysAreErrors(t *testing.T) {
	for _, tc := range []struct{ doc, path, msg string }{
		{`{"pipelines": {"p": [{"kind": "timeout", "config": {"Duration": "1s"}}], "p": []}}`, "pipelines.p", `the key "p" appears twice`},
		{`{"guards": {"b": {"kind": "breaker", "kind": "bulkhead"}}}`, "guards.b.kind", `the key "kind" appears twice`},
		{`{"guards": {"b": {"kind": "breaker", "config": {"Threshold": 3, "Threshold": 5}}}}`, "guards.b.config", `the key "Threshold" appears twice`},
	} {
		_, err := build(tc.doc)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Path != tc.path || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one at %s saying %q", tc.doc, err, tc.path, tc.msg)
		}
	}
}

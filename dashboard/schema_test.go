package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The snapshot format as the package doc gives it, for strict decoding:
// a field the doc does not list fails the test.
type snapshotJSON struct {
	Version         int                                 `json:"version"`
	Time            string                              `json:"time"`
	Seq             uint64                              `json:"seq"`
	IntervalSeconds float64                             `json:"intervalSeconds"`
	Values          map[string]map[string]valueDescJSON `json:"values"`
	Guards          []tileJSON                          `json:"guards"`
	Pipelines       []pipeJSON                          `json:"pipelines"`
}

type valueDescJSON struct {
	Unit string `json:"unit"`
	Type string `json:"type"`
	Help string `json:"help"`
}

type tileJSON struct {
	Name           string       `json:"name"`
	State          string       `json:"state,omitempty"`
	Forced         bool         `json:"forced,omitempty"`
	Guards         []guardJSON  `json:"guards"`
	CallsPerSec    *float64     `json:"callsPerSec"`
	ErrorsPerSec   *float64     `json:"errorsPerSec"`
	RefusalsPerSec *float64     `json:"refusalsPerSec"`
	ErrorPct       *float64     `json:"errorPct"`
	LatencyMs      *latencyJSON `json:"latencyMs"`
	History        *historyJSON `json:"history,omitempty"`
}

type guardJSON struct {
	Kind    string              `json:"kind"`
	State   string              `json:"state,omitempty"`
	Refused uint64              `json:"refused"`
	Values  map[string]*float64 `json:"values"`
	Keys    *keysJSON           `json:"keys,omitempty"`
}

type keysJSON struct {
	Keys    int `json:"keys"`
	MaxKeys int `json:"maxKeys"`
	Open    int `json:"open"`
	Top     []struct {
		Key     string `json:"key"`
		State   string `json:"state,omitempty"`
		Refused uint64 `json:"refused"`
	} `json:"top"`
}

type latencyJSON struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

type historyJSON struct {
	Calls  []float64 `json:"calls"`
	Errors []float64 `json:"errors"`
}

type pipeJSON struct {
	Name            string   `json:"name"`
	Chain           string   `json:"chain"`
	RetriesPerSec   *float64 `json:"retriesPerSec"`
	FallbacksPerSec *float64 `json:"fallbacksPerSec"`
}

// decode decodes one snapshot strictly: unknown fields and trailing data
// fail t.
func decode(t testing.TB, b []byte) snapshotJSON {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s snapshotJSON
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("snapshot does not decode as the documented format: %v\n%s", err, b)
	}
	if dec.More() {
		t.Fatalf("data after the snapshot:\n%s", b)
	}
	if _, err := time.Parse(time.RFC3339Nano, s.Time); err != nil {
		t.Fatalf("time %q is not RFC 3339: %v", s.Time, err)
	}
	return s
}

// snap takes (or reuses) the snapshot at the dashboard's clock's now.
func snap(t testing.TB, d *Dashboard, full bool) snapshotJSON {
	t.Helper()
	b, _ := d.current(d.clock.Now(), full)
	return decode(t, b)
}

func ptr(v float64) *float64 { return &v }

// keys returns the keys of a JSON object, sorted.
func keys(t *testing.T, what string, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, want an object", what, v)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Every documented field is there, null or not, in both kinds of
// snapshot; the optional parts are there only when they apply.
func TestSnapshotFields(t *testing.T) {
	d, f, reg := newFakeDashboard(t)
	lim := newFake(ratelimit.Kind, "db")
	lim.set(func(s *telemetry.Snapshot) {
		s.Values = []telemetry.Value{{Name: "rate", Unit: "{token}/s", Help: "Tokens per second.", Value: math.Inf(1)}}
	})
	keyed := newFake("mykeyed", "users")
	keyed.set(func(s *telemetry.Snapshot) {
		s.Keys = &telemetry.KeySummary{Keys: 1, MaxKeys: 2, Top: []telemetry.KeyStat{{Key: "u", State: "open", Refused: 1}}}
	})
	for _, g := range []telemetry.Guard{
		breaker.New(breaker.WithName("db"), breaker.WithClock(f)),
		newFake(bulkhead.Kind, "db"),
		lim, keyed,
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	p := Measure[int](d, "db")
	if err := reg.RegisterPipeline("db", p); err != nil {
		t.Fatal(err)
	}
	Measure[int](d, "bare")
	snap(t, d, false)
	f.Advance(time.Second)
	_, _ = p.Do(context.Background(), op(f, time.Millisecond, nil))

	for _, full := range []bool{true, false} {
		b, _ := d.current(f.Now(), full)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		check := func(what string, obj any, want ...string) {
			t.Helper()
			slices.Sort(want)
			if diff := cmp.Diff(want, keys(t, what, obj)); diff != "" {
				t.Errorf("full=%v: keys of %s mismatch (-want +got):\n%s", full, what, diff)
			}
		}
		check("the snapshot", v, "version", "time", "seq", "intervalSeconds", "values", "guards", "pipelines")
		check("the values described", v["values"], "breaker", "ratelimit")
		check("a value described", v["values"].(map[string]any)["ratelimit"].(map[string]any)["rate"], "unit", "type", "help")
		guards := v["guards"].([]any)
		tileKeys := []string{"name", "guards", "callsPerSec", "errorsPerSec", "refusalsPerSec", "errorPct", "latencyMs"}
		if full {
			tileKeys = append(tileKeys, "history")
		}
		check("the tile bare", guards[0], tileKeys...)
		check("the tile db", guards[1], append(tileKeys, "state", "forced")...)
		db := guards[1].(map[string]any)
		gs := db["guards"].([]any)
		check("breaker", gs[0], "kind", "state", "refused", "values")
		check("bulkhead", gs[1], "kind", "refused", "values")
		if r := gs[2].(map[string]any)["values"].(map[string]any)["rate"]; r != nil {
			t.Errorf("an infinite limiter rate is %v, want null", r)
		}
		check("keyed", guards[2].(map[string]any)["guards"].([]any)[0], "kind", "refused", "values", "keys")
		check("latencyMs", db["latencyMs"], "p50", "p90", "p99")
		if full {
			check("history", db["history"], "calls", "errors")
		}
		check("a pipeline", v["pipelines"].([]any)[0], "name", "chain", "retriesPerSec", "fallbacksPerSec")
		decode(t, b)
	}
}

package dashdemo

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{}, ""},
		{Config{Rate: 50, Phase: time.Second, Timeout: time.Second, Cooldown: time.Second}, ""},
		{Config{Rate: 1000, Phase: 500 * time.Millisecond}, ""},
		{Config{Rate: -1}, "dashdemo: Rate must be in [0, 1000], got -1"},
		{Config{Rate: 1001}, "dashdemo: Rate must be in [0, 1000], got 1001"},
		{Config{Phase: time.Millisecond}, "dashdemo: Phase must be 0 or >= 500ms, got 1ms"},
		{Config{Phase: 1}, "dashdemo: Phase must be 0 or >= 500ms, got 1ns"},
		{Config{Timeout: -1}, "dashdemo: Timeout must be >= 0, got -1ns"},
		{Config{Cooldown: -1}, "dashdemo: Cooldown must be >= 0, got -1ns"},
	} {
		got := ""
		if err := c.c.Validate(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v.Validate() = %q, want %q", c.c, got, c.want)
		}
	}
	if _, err := New(Config{Rate: -1}); err == nil {
		t.Error("New with an invalid Config returned no error")
	}
}

// The dependencies' server answers as each one's script says, prices by
// the phase.
func TestServer(t *testing.T) {
	d, err := New(Config{Phase: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	get := func(path string) int {
		rec := httptest.NewRecorder()
		d.serve(rec, httptest.NewRequest("GET", path, nil))
		_, _ = io.ReadAll(rec.Body)
		return rec.Code
	}
	for _, c := range []struct {
		phase Phase
		path  string
		want  int
	}{
		{Healthy, "/prices", 200}, {Failing, "/prices", 500}, {Recovered, "/prices", 200},
		{Failing, "/inventory", 200}, {Failing, "/recommendations", 200}, {Healthy, "/nope", 404},
	} {
		d.phase.Store(int32(c.phase))
		if got := get(c.path); got != c.want {
			t.Errorf("%s in the %s phase: %d, want %d", c.path, c.phase, got, c.want)
		}
	}
	// Hanging: no answer; the server gives up with its client.
	d.phase.Store(int32(Hanging))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	d.serve(rec, httptest.NewRequest("GET", "/prices", nil).WithContext(ctx))
	if rec.Body.Len() != 0 {
		t.Errorf("hanging /prices answered %q, want nothing", rec.Body.String())
	}
	if len(d.Registry.Snapshots()) != 4 || len(d.Registry.Pipelines()) != 4 {
		t.Errorf("%d guards and %d pipelines registered, want 4 and 4", len(d.Registry.Snapshots()), len(d.Registry.Pipelines()))
	}
}

// The demo's chains have no measure layer, and the dashboard still has
// each tile's latency: the registry, the policies' one observer, passes
// the retry's attempt durations on to it.
func TestLatencyWithoutMeasureLayers(t *testing.T) {
	d, err := New(Config{Phase: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, p := range d.Registry.Pipelines() {
		if strings.Contains(p.Chain, "measure") {
			t.Errorf("pipeline %s: chain %q has a measure layer", p.Name, p.Chain)
		}
	}
	dp := d.deps[0]
	resp, err := dp.client.Get(dp.url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	rec := httptest.NewRecorder()
	d.Dashboard.ServeHTTP(rec, httptest.NewRequest("GET", "/snapshot.json", nil))
	var s struct {
		Guards []struct {
			Name      string
			LatencyMs *struct{ P50 float64 } `json:"latencyMs"`
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	for _, g := range s.Guards {
		if g.Name == dp.name {
			if g.LatencyMs == nil || g.LatencyMs.P50 <= 0 {
				t.Fatalf("tile %s: latencyMs %v, want the call's latency", g.Name, g.LatencyMs)
			}
			return
		}
	}
	t.Fatalf("no tile %s in %s", dp.name, rec.Body.Bytes())
}

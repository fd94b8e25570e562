package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/dashdemo"
)

// A run through one outage and its recovery: the dashboard is served, the
// breaker opens in the failing phase and closes in the recovered one, and
// run reports success. It runs on real time (real HTTP), bounded by its
// context: 6.6 s.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6600*time.Millisecond)
	defer cancel()
	r, w := io.Pipe()
	result := make(chan bool, 1)
	go func() {
		defer w.Close()
		result <- run(ctx, "127.0.0.1:0", dashdemo.Config{Phase: 1500 * time.Millisecond}, w)
	}()

	var out strings.Builder
	lines := bufio.NewScanner(r)
	checked := false
	for lines.Scan() {
		line := lines.Text()
		out.WriteString(line + "\n")
		if url, ok := strings.CutPrefix(line, "dashboard: http://"); ok && !checked {
			checked = true
			addr, _, _ := strings.Cut(url, "/")
			checkSnapshot(t, "http://"+addr+"/snapshot.json")
		}
	}
	var ok bool
	select {
	case ok = <-result:
	case <-time.After(20 * time.Second):
		t.Fatalf("run did not return 20s after its context ended; output:\n%s", out.String())
	}
	if !checked {
		t.Fatalf("run printed no dashboard address; output:\n%s", out.String())
	}
	for _, want := range []string{"prices server: failing", "breaker prices: closed -> open", "prices server: recovered", "-> closed", "1 outages, 1 recoveries"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !ok {
		t.Errorf("run reported a failure; output:\n%s", out.String())
	}
}

// checkSnapshot reads one snapshot from the running dashboard.
func checkSnapshot(t *testing.T, url string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var s struct {
		Version int
		Guards  []struct{ Name string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	var names []string
	for _, g := range s.Guards {
		names = append(names, g.Name)
	}
	if s.Version != 2 || len(names) != 4 {
		t.Fatalf("snapshot: version %d, tiles %v; want version 2 and the 4 dependencies", s.Version, names)
	}
}

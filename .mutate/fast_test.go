package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSelectTests pins the per-test selection: a mutant runs the tests
// whose own coverage ran its line, every test when none did, and the -run
// pattern when per-test coverage is off.
func TestSelectTests(t *testing.T) {
	fr := &fastRun{
		perTest: true,
		names:   []string{"TestA", "TestB", "ExampleC", "FuzzD"},
		tests: map[string][]block{
			"TestA":    {{file: "a.go", startLine: 10, startCol: 1, endLine: 20, endCol: 2, count: 1}},
			"TestB":    {{file: "a.go", startLine: 15, startCol: 3, endLine: 16, endCol: 9, count: 1}, {file: "b.go", startLine: 1, startCol: 1, endLine: 5, endCol: 1, count: 1}},
			"ExampleC": {{file: "b.go", startLine: 15, startCol: 3, endLine: 16, endCol: 9, count: 1}},
			"FuzzD":    nil,
		},
	}
	at := func(file string, line, col int) mutant { return mutant{file: "/x/" + file, line: line, col: col} }
	got := map[string]string{
		"a.go:15:5": fr.selectTests(config{}, at("a.go", 15, 5)),
		"a.go:12:1": fr.selectTests(config{}, at("a.go", 12, 1)),
		"a.go:16:9": fr.selectTests(config{}, at("a.go", 16, 9)),
		"b.go:16:1": fr.selectTests(config{}, at("b.go", 16, 1)),
		"a.go:30:1": fr.selectTests(config{}, at("a.go", 30, 1)),
	}
	want := map[string]string{
		"a.go:15:5": "^(TestA|TestB)$",
		"a.go:12:1": "^(TestA)$",
		"a.go:16:9": "^(TestA|TestB)$",
		"b.go:16:1": "^(ExampleC)$",
		"a.go:30:1": "", // no single test ran it: every test
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	fr.perTest = false
	if got := fr.selectTests(config{run: "TestB"}, at("a.go", 15, 5)); got != "TestB" {
		t.Errorf("per-test coverage off: got %q, want the -run pattern", got)
	}
}

func TestOwnBuildTimeoutAddsTheSchemaBuild(t *testing.T) {
	if got := ownBuildTimeout(20*time.Second, nil); got != 20*time.Second {
		t.Errorf("without the schema: %v, want 20s (the baseline held the build)", got)
	}
	if got := ownBuildTimeout(20*time.Second, &fastRun{build: 7 * time.Second}); got != 27*time.Second {
		t.Errorf("with a schema built in 7s: %v, want 27s", got)
	}
}

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocsShowInventoryPolicy checks that docs/testing.md shows
// TestInventoryPolicy as it is in pipeline_test.go, with its true length.
func TestDocsShowInventoryPolicy(t *testing.T) {
	doc, err := os.ReadFile("../../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("pipeline_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	start := strings.Index(s, "func TestInventoryPolicy(")
	if start < 0 {
		t.Fatal("pipeline_test.go has no TestInventoryPolicy")
	}
	test := s[start : start+strings.Index(s[start:], "\n}\n")+3]
	if !strings.Contains(string(doc), "```go\n"+test+"```\n") {
		t.Errorf("docs/testing.md does not show TestInventoryPolicy as pipeline_test.go has it:\n%s", test)
	}
	lines := strings.Count(test, "\n")
	if claim := fmt.Sprintf("a test of %d lines", lines); !strings.Contains(string(doc), claim) {
		t.Errorf("docs/testing.md does not say %q", claim)
	}
	for i, line := range strings.Split(test, "\n") {
		if width := len(strings.ReplaceAll(line, "\t", "    ")); width > 100 {
			t.Errorf("line %d of TestInventoryPolicy is %d columns wide, more than 100", i+1, width)
		}
	}
}

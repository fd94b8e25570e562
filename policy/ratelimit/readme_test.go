package ratelimit_test

import (
	"os"
	"strings"
	"testing"
)

// The README's promise that a Keyed is safe to key on client input carries
// Keyed's caveat: an evicted key comes back with a full bucket.
func TestREADMEKeyedCaveat(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("no README beside the module: %v", err)
	}
	readme := string(data)
	start := strings.Index(readme, "### Rate limiter")
	if start < 0 {
		t.Fatal("README has no rate limiter section")
	}
	section := readme[start:]
	if end := strings.Index(section[1:], "\n### "); end >= 0 {
		section = section[:end+1]
	}
	flat := strings.Join(strings.Fields(section), " ")
	if strings.Contains(flat, "safe to key on client input") && !strings.Contains(flat, "an evicted key comes back with a full bucket") {
		t.Errorf("README's rate limiter section says NewKeyed is safe to key on client input without the caveat that an evicted key comes back with a full bucket:\n%s", section)
	}
}

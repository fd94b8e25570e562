package ratelimit_test

import (
	"os"
	"strings"
	"testing"
)

// The package doc's promise that a Keyed is safe to key on client input
// carries Keyed's caveat: an evicted key comes back with a full bucket.
func TestDocKeyedCaveat(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString(strings.TrimPrefix(line, "//"))
		b.WriteByte(' ')
	}
	flat := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(flat, "safe to key on client input") {
		t.Fatal("the package doc no longer says where a Keyed is safe to key on client input; update this test")
	}
	if !strings.Contains(flat, "an evicted key comes back with a full bucket") {
		t.Errorf("the package doc says a Keyed is safe to key on client input without the caveat that an evicted key comes back with a full bucket")
	}
}

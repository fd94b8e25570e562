package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestCompareScriptChecksItsFlags runs bench/compare with flags that must
// be refused before anything is built, and with good ones that get as far
// as the revision check.
func TestCompareScriptChecksItsFlags(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, c := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"-count"}, 2, "compare: -count: missing value"},
		{[]string{"-bench"}, 2, "compare: -bench: missing value"},
		{[]string{"-o"}, 2, "compare: -o: missing value"},
		{[]string{"-benchtime"}, 2, "compare: -benchtime: missing value"},
		{[]string{"-count", "0", "HEAD"}, 2, "compare: -count 0: want a positive integer"},
		{[]string{"-benchtime", "1y", "HEAD"}, 2, "compare: -benchtime 1y: want a duration (200ms) or a count of iterations (100x)"},
		{[]string{"-benchtime", "0x", "HEAD"}, 2, "compare: -benchtime 0x: want"},
		{[]string{"-benchtime", "ms", "HEAD"}, 2, "compare: -benchtime ms: want"},
		{[]string{"-benchtime", "100x", "no-such-rev"}, 2, "compare: no-such-rev: not a commit"},
		{[]string{"-benchtime", "1.5s", "no-such-rev"}, 2, "compare: no-such-rev: not a commit"},
		{[]string{"-benchtime", "1m30s", "no-such-rev"}, 2, "compare: no-such-rev: not a commit"},
	} {
		cmd := exec.Command("bash", append([]string{"../../compare"}, c.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.wantCode {
			t.Errorf("compare %q: err = %v, want exit code %d; stderr:\n%s", c.args, err, c.wantCode, stderr.String())
			continue
		}
		if got := stderr.String(); !strings.Contains(got, c.wantErr) {
			t.Errorf("compare %q: stderr = %q, want it to contain %q", c.args, got, c.wantErr)
		}
	}
}

package main

import (
	"context"
	"testing"
	"time"
)

// TestRunTestsEndsAtTheFirstFailure: a run whose output reports a failure
// ("--- FAIL", here split across two writes) and then hangs, as an example
// run after a failed test under -test.failfast may, is ended as failed, not
// as timed out; runCmd waits for its end.
func TestRunTestsEndsAtTheFirstFailure(t *testing.T) {
	script := []string{"sh", "-c", `printf -- '--- FA'; sleep 0.1; printf 'IL: TestX (0.00s)\n'; sleep 600`}
	res := runTests(context.Background(), t.TempDir(), nil, script, 60*time.Second)
	if res.timedOut || res.err == nil {
		t.Fatalf("runTests: timed out %v, err %v; want ended as failed (output %q)", res.timedOut, res.err, res.out)
	}
	if string(res.out) != "--- FAIL: TestX (0.00s)\n" {
		t.Errorf("output %q, want the failure line", res.out)
	}
	res = runCmd(context.Background(), t.TempDir(), nil, []string{"sh", "-c", `echo '--- FAIL: TestX'; sleep 0.2; echo done`}, 60*time.Second)
	if res.err != nil || string(res.out) != "--- FAIL: TestX\ndone\n" {
		t.Errorf("runCmd: err %v, output %q; want the whole output and the command's own exit", res.err, res.out)
	}
}

// TestRunTestsPassing: a run without a failure line ends with the
// command, its output whole.
func TestRunTestsPassing(t *testing.T) {
	res := runTests(context.Background(), t.TempDir(), nil, []string{"sh", "-c", `echo ok; echo '--- PASS: TestX'`}, 60*time.Second)
	if res.err != nil || res.timedOut || string(res.out) != "ok\n--- PASS: TestX\n" {
		t.Errorf("err %v, timed out %v, output %q; want nil, false and the whole output", res.err, res.timedOut, res.out)
	}
}

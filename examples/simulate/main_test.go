package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/sim"
)

// The tests assert the orderings and thresholds the experiments are known
// for, not the simulator's exact numbers.

// TestJitter checks the blog's findings, with 50 and 100 clients: without
// jitter, exponential backoff does much more work and takes much longer
// than with full jitter; full jitter does the least work (equal jitter, a
// statistical tie in work, takes much longer); decorrelated jitter
// finishes about as fast as full jitter, or faster.
func TestJitter(t *testing.T) {
	for _, n := range []int{50, 100} {
		rows := map[backoff.Jitter]jitterRow{}
		for _, r := range jitterExperiment(n, 10) {
			rows[r.Jitter] = r
		}
		none, full, equal, decorr := rows[backoff.None], rows[backoff.Full], rows[backoff.Equal], rows[backoff.Decorrelated]
		t.Logf("%d clients: %+v", n, rows)
		if none.Work < 1.5*full.Work || none.Time < 5*full.Time {
			t.Errorf("%d clients: no jitter %.0f calls in %v, full jitter %.0f in %v; want no jitter to do much more work (≥ 1.5×) and take much longer (≥ 5×)",
				n, none.Work, none.Time, full.Work, full.Time)
		}
		if full.Work >= decorr.Work || full.Work > 1.02*equal.Work {
			t.Errorf("%d clients: full jitter %.0f calls, equal %.0f, decorrelated %.0f; want full jitter to do the least (equal within 2%%)",
				n, full.Work, equal.Work, decorr.Work)
		}
		if equal.Time < full.Time*6/5 {
			t.Errorf("%d clients: equal jitter took %v, full %v; want equal jitter to take longer (≥ 1.2×)", n, equal.Time, full.Time)
		}
		if decorr.Time > full.Time*21/20 {
			t.Errorf("%d clients: decorrelated jitter took %v, full %v; want it about as fast (within 5%%) or faster", n, decorr.Time, full.Time)
		}
	}
}

// TestCollapse checks the metastable failure: before the spike every
// pipeline serves the clients; long after it, 3 retries without backoff
// still serve nothing (the server is busy with retries and abandoned
// work: the amplification stays at 4), while backoff with jitter, a retry
// budget and a breaker are back to what they served before.
func TestCollapse(t *testing.T) {
	results := map[string]*sim.Result{}
	for _, r := range sim.Compare(collapseScenario(), collapseSets()...) {
		results[r.Name] = r
	}
	noRetry := results["no retry"]
	healthy := perSecond(noRetry.Window(beforeSpike[0], beforeSpike[1]), beforeSpike)
	if healthy < 150 {
		t.Fatalf("before the spike, %.1f calls/s succeed without retries; want a healthy server (≥ 150/s)", healthy)
	}
	for name, r := range results {
		before, after := r.Window(beforeSpike[0], beforeSpike[1]), r.Window(longAfter[0], longAfter[1])
		t.Logf("%-50s ok/s before %6.1f, after %6.1f; amplification %.2f, after %.2f", name,
			perSecond(before, beforeSpike), perSecond(after, longAfter), r.Amplification(), after.Amplification())
		if got := perSecond(before, beforeSpike); got < 0.95*healthy {
			t.Errorf("%s: %.1f ok/s before the spike, want about %.1f: the spike must be the trigger", name, got, healthy)
		}
		recovered := perSecond(after, longAfter) >= 0.9*healthy
		if name == "3 retries, no backoff" {
			if perSecond(after, longAfter) > 0.1*healthy || after.Amplification() < 3.5 {
				t.Errorf("%s: %.1f ok/s, amplification %.2f long after the spike; want it collapsed (≤ 10%% of %.1f, amplification ≥ 3.5)",
					name, perSecond(after, longAfter), after.Amplification(), healthy)
			}
			continue
		}
		if !recovered || after.Amplification() > 1.1 {
			t.Errorf("%s: %.1f ok/s, amplification %.2f long after the spike; want it recovered (≥ 90%% of %.1f, amplification ≤ 1.1)",
				name, perSecond(after, longAfter), after.Amplification(), healthy)
		}
	}
	if len(results) != 5 {
		t.Errorf("%d policy sets, want 5", len(results))
	}
}

// TestBreakerDown checks that a breaker in front of a down dependency lets
// through its threshold, then at most MaxTrials calls per cooldown; that
// it does probe every cooldown; and that it closes once the dependency is
// back, while without it every call reaches the dead server.
func TestBreakerDown(t *testing.T) {
	results := sim.Compare(breakerScenario(), breakerSets()...)
	none, guarded := results[0], results[1]
	const outage = outageEnd - outageStart
	if got := guarded.Window(outageStart, outageEnd).ServerCalls; got > breakerBound() || got < threshold+int(outage/cooldown)-1 {
		t.Errorf("the breaker let %d calls through to the down server, want at most threshold + trials per cooldown = %d, and a trial each cooldown (≥ %d)",
			got, breakerBound(), threshold+int(outage/cooldown)-1)
	}
	// After the trip, any window of one cooldown holds at most maxTrials
	// calls at the server.
	per := int(cooldown / guarded.Bucket)
	trip := int((outageStart + time.Second) / guarded.Bucket) // the threshold is used up within the first second
	for i := trip; i+per <= int(outageEnd/guarded.Bucket); i++ {
		n := 0
		for _, b := range guarded.Series[i : i+per] {
			n += b.ServerCalls
		}
		if n > maxTrials {
			t.Fatalf("%d server calls in the cooldown-long window from %v, want at most %d", n, time.Duration(i)*guarded.Bucket, maxTrials)
		}
	}
	if got := none.Window(outageStart, outageEnd).ServerCalls; got < 100*breakerBound() {
		t.Errorf("without a breaker %d calls reached the down server, want far more (≥ 100×) than with it", got)
	}
	// Recovered: within two cooldowns of the outage's end, calls succeed again.
	back := guarded.Window(outageEnd+2*cooldown, breakerScenario().Duration)
	if back.Successes == 0 || back.Refused != 0 || back.Failures != 0 {
		t.Errorf("after the outage: %+v, want every call to succeed", back)
	}
}

// runOrder runs an order case twice and fails the test if the runs
// differ; it returns the recommended order's result, the mistake's, and
// the rest.
func runOrder(t *testing.T, c orderCase) (good, bad *sim.Result, rest []*sim.Result) {
	t.Helper()
	first := sim.Compare(c.Scenario, c.Sets...)
	if diff := cmp.Diff(first, sim.Compare(c.Scenario, c.Sets...)); diff != "" {
		t.Errorf("%s: same seed, different results (-first +again):\n%s", c.Scenario.Name, diff)
	}
	for _, r := range first {
		t.Logf("%-40s dependency calls %5d (%5d %s), per call %.2f, p50 %v, p99 %v, success %.2f%%", r.Name, r.ServerCalls,
			r.Window(c.Window[0], c.Window[1]).ServerCalls, c.WindowName, r.Amplification(), r.Latency(0.5), r.Latency(0.99), 100*r.SuccessRate())
	}
	return first[0], first[1], first[2:]
}

// TestOrderTimeoutOutsideRetry checks that a timeout per attempt inside the
// retry turns the slow replica's calls into successes after a retry, while
// a timeout outside the retry lets the slow first attempt use up the time:
// the calls that hit it fail (about 5%), at the timeout, which becomes the
// p99. The retry costs about 5% more calls to the dependency.
func TestOrderTimeoutOutsideRetry(t *testing.T) {
	good, bad, _ := runOrder(t, orderTimeout())
	if good.SuccessRate() < 0.999 || bad.SuccessRate() > 0.96 {
		t.Errorf("success %.4f with the timeout inside the retry, %.4f outside: want ≥ 0.999 and ≤ 0.96", good.SuccessRate(), bad.SuccessRate())
	}
	if g, b := good.Latency(0.99), bad.Latency(0.99); g > 150*time.Millisecond || b != 250*time.Millisecond {
		t.Errorf("p99 %v with the timeout inside the retry, %v outside: want ≤ 150ms (a cut attempt and a retry) and the outer timeout, 250ms", g, b)
	}
	if a := good.Amplification(); a < 1.03 || a > 1.08 {
		t.Errorf("the retry's cost: %.2f dependency calls per call, want about 1.05", a)
	}
}

// TestOrderBreakerOutsideRetry checks that with the retry outside the
// breaker, the breaker lets through to the down dependency its threshold
// and a trial per cooldown, while with the breaker outside the retry it
// lets through 3 times as many (each failure it counts is 3 attempts, and
// each trial a whole retry sequence).
func TestOrderBreakerOutsideRetry(t *testing.T) {
	good, bad, _ := runOrder(t, orderBreaker())
	const outage = orderOutageEnd - orderOutageStart
	bound := 5 + int(outage/time.Second) // the threshold, then a trial per cooldown
	g, b := good.Window(orderOutageStart, orderOutageEnd).ServerCalls, bad.Window(orderOutageStart, orderOutageEnd).ServerCalls
	if g > bound || b < 3*g-5 {
		t.Errorf("%d dependency calls while down with the retry outside the breaker, %d with the breaker outside: want ≤ %d, and about 3 times as many",
			g, b, bound)
	}
	if good.SuccessRate() < bad.SuccessRate() {
		t.Errorf("success %.4f with the retry outside the breaker, %.4f with the breaker outside: want the recommended order not worse",
			good.SuccessRate(), bad.SuccessRate())
	}
}

// TestOrderHedgeWithoutBudget checks that a hedge without a budget,
// in a load spike that makes most calls slower than its delay, sends
// nearly twice the calls to the dependency, which fills it up: calls fail
// and the median gets slower; with a budget of 10% the hedges stay about
// a tenth of the load, and every call succeeds.
func TestOrderHedgeWithoutBudget(t *testing.T) {
	good, bad, rest := runOrder(t, orderHedge())
	none := rest[0]
	if g, b := good.Amplification(), bad.Amplification(); g > 1.12 || b < 1.8 {
		t.Errorf("%.2f dependency calls per call with a budget, %.2f without: want ≤ 1.12 and ≥ 1.8", g, b)
	}
	if good.SuccessRate() != 1 || bad.SuccessRate() > 0.95 {
		t.Errorf("success %.4f with a budget, %.4f without: want 1, and failures without (the server full)", good.SuccessRate(), bad.SuccessRate())
	}
	if g, b := good.Latency(0.5), bad.Latency(0.5); g >= b {
		t.Errorf("p50 %v with a budget, %v without: want the budget's lower", g, b)
	}
	if good.Amplification() <= none.Amplification() {
		t.Errorf("%.2f dependency calls per call with a budgeted hedge, %.2f without a hedge: want the hedge to send some copies",
			good.Amplification(), none.Amplification())
	}
}

// TestRun runs the command's work into a temporary directory: three plots
// and the tables (the jitter experiment over 2 seeds only: TestJitter
// checks its figures).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	if err := run(&out, dir, 2); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jitter.svg", "collapse.svg", "breaker.svg", "order-timeout.svg", "order-breaker.svg", "order-hedge.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.HasPrefix(string(b), "<svg ") {
			t.Errorf("%s: %v, want an SVG", name, err)
		}
	}
	for _, want := range []string{"Exponential backoff and jitter", "decorrelated", "Retry-driven collapse", "amplification", "server calls while down",
		"Timeout outside retry", "Breaker outside retry", "Hedge without a budget", "p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}

package rapidgen

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// extreme draws one value of g from a bit stream of the byte b repeated:
// 0x00 is the smallest draw, the one rapid shrinks towards (every range at
// its low end, every choice the first), and 0xff the largest (every range
// at its high end, every choice the last).
func extreme[V any](t *testing.T, g *rapid.Generator[V], b byte) V {
	t.Helper()
	var v V
	drawn := false
	rapid.MakeFuzz(func(rt *rapid.T) {
		v = g.Draw(rt, "v")
		drawn = true
	})(t, bytes.Repeat([]byte{b}, 1<<13))
	if !drawn {
		t.Fatalf("%v: nothing drawn from a stream of %#x", g, b)
	}
	return v
}

// describe is v's description (its String).
func describe(v any) string { return fmt.Sprint(v) }

// TestSmallestDraws checks that each generator's smallest draw, the one a
// failing case shrinks towards, is at the low end of every documented
// range: fewer steps, earlier times, healthier faults, smaller settings.
func TestSmallestDraws(t *testing.T) {
	for _, c := range []struct {
		name string
		draw func() any
		want string
	}{
		{"Fault()", func() any { return extreme(t, Fault(nil), 0) }, "healthy"},
		{"Fault(Panic, Healthy)", func() any { return extreme(t, Fault(nil, Panic, Healthy), 0) }, "healthy"},
		{"Fault(Fail)", func() any { return extreme(t, Fault(nil, Fail), 0) }, "fail-rate(1, seed 0)"},
		{"Fault(RetryAfter)", func() any { return extreme(t, Fault(nil, RetryAfter), 0) }, "retry-after(0s)"},
		{"Fault(Delay)", func() any { return extreme(t, Fault(nil, Delay), 0) }, "delay(fixed(0s))"},
		{"Timeline(1m)", func() any { return extreme(t, Timeline(nil, time.Minute), 0) }, "timeline(0s healthy)"},
		{"Timeline(0)", func() any { return extreme(t, Timeline(nil, 0), 0) }, "timeline(0s healthy)"},
		{"Latency()", func() any { return extreme(t, Latency(), 0) }, "fixed(0s)"},
		{"Duration(1s, 2s)", func() any { return extreme(t, Duration(time.Second, 2*time.Second), 0) }, "1s"},
		{"Duration(1s, 1s+500ns)", func() any { return extreme(t, Duration(time.Second, time.Second+500), 0) }, "1s"},
		{"Duration(3ms, 3ms)", func() any { return extreme(t, Duration(3*time.Millisecond, 3*time.Millisecond), 0) }, "3ms"},
		{"Backoff()", func() any { return extreme(t, Backoff(), 0) }, "constant(1ms)"},
		{"Retry()", func() any { return extreme(t, Retry(), 0) }, "retry{Attempts: 1, Backoff: constant(1ms)}"},
		{"Breaker()", func() any { return extreme(t, Breaker(), 0) }, "breaker{Threshold: 1, Cooldown: 1ms, MaxTrials: 1, SuccessThreshold: 1}"},
		{"Limiter()", func() any { return extreme(t, Limiter(), 0) }, "limiter{Rate: 0.1, Burst: 1}"},
	} {
		if diff := cmp.Diff(c.want, describe(c.draw())); diff != "" {
			t.Errorf("%s: smallest draw mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestLargestDraws checks that each generator's largest draw is at the
// high end of every documented range.
func TestLargestDraws(t *testing.T) {
	const exp = "exponential(250ms, seed 18446744073709551615)"
	for _, c := range []struct {
		name string
		draw func() any
		want string
	}{
		{"Fault()", func() any { return extreme(t, Fault(nil), 0xff) }, "delay(" + exp + ")"},
		{"Fault(Healthy, Panic)", func() any { return extreme(t, Fault(nil, Panic, Healthy), 0xff) }, "panic(rapidgen: injected panic)"},
		{"Fault(Panic)", func() any { return extreme(t, Fault(nil, Panic), 0xff) }, "panic(rapidgen: injected panic)"},
		{"Fault(Hang)", func() any { return extreme(t, Fault(nil, Hang), 0xff) }, "hang"},
		{"Fault(Fail)", func() any { return extreme(t, Fault(nil, Fail), 0xff) }, "fail-rate(0.99, seed 18446744073709551615)"},
		{"Fault(RetryAfter)", func() any { return extreme(t, Fault(nil, RetryAfter), 0xff) }, "retry-after(10s)"},
		{"Timeline(1m, Healthy)", func() any { return extreme(t, Timeline(nil, time.Minute, Healthy), 0xff) },
			"timeline(0s healthy, 1m0s healthy, 1m0s healthy, 1m0s healthy, 1m0s healthy, 1m0s healthy, 1m0s healthy, 1m0s healthy)"},
		{"Latency()", func() any { return extreme(t, Latency(), 0xff) }, exp},
		{"Duration(1s, 2s)", func() any { return extreme(t, Duration(time.Second, 2*time.Second), 0xff) }, "2s"},
		{"Duration(1s, 1s+500ns)", func() any { return extreme(t, Duration(time.Second, time.Second+500), 0xff) }, "1.0000005s"},
		{"Duration(0, 500ns)", func() any { return extreme(t, Duration(0, 500), 0xff) }, "500ns"},
		{"Backoff()", func() any { return extreme(t, Backoff(), 0xff) }, "exponential(1s×4, max 10s, decorrelated jitter)"},
		{"Retry()", func() any { return extreme(t, Retry(), 0xff) },
			"retry{Attempts: 6, Backoff: exponential(1s×4, max 10s, decorrelated jitter), MaxElapsed: 30s}"},
		{"Breaker()", func() any { return extreme(t, Breaker(), 0xff) }, "breaker{Threshold: 10, Cooldown: 1m0s, MaxTrials: 3, SuccessThreshold: 3}"},
		{"Limiter()", func() any { return extreme(t, Limiter(), 0xff) }, "limiter{Rate: 1000, Burst: 100}"},
	} {
		if diff := cmp.Diff(c.want, describe(c.draw())); diff != "" {
			t.Errorf("%s: largest draw mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

// examples are the draws of g for the seeds 0 to n-1.
func examples[V any](g *rapid.Generator[V], n int) []V {
	vs := make([]V, n)
	for i := range vs {
		vs[i] = g.Example(i)
	}
	return vs
}

// wholeMillis reports whether d is in whole milliseconds.
func wholeMillis(d time.Duration) bool { return d%time.Millisecond == 0 }

// TestFaultDrawsOnlyTheKindsAsked checks that Fault draws every kind it
// is given and no other, the default kinds when given none, with a
// partial failure rate in [0.01, 0.99] and a hint in whole milliseconds
// in [0, 10s].
func TestFaultDrawsOnlyTheKindsAsked(t *testing.T) {
	kindOf := func(f resiliencetest.Fault) string {
		s := f.String()
		if i := strings.IndexByte(s, '('); i >= 0 {
			s = s[:i]
		}
		return s
	}
	count := func(g *rapid.Generator[resiliencetest.Fault]) map[string]int {
		seen := make(map[string]int)
		for _, f := range examples(g, 300) {
			seen[kindOf(f)]++
		}
		return seen
	}
	for _, c := range []struct {
		kinds []Kind
		want  []string
	}{
		{nil, []string{"delay", "fail-rate", "healthy", "retry-after"}},
		{[]Kind{Hang, Panic}, []string{"hang", "panic"}},
		{[]Kind{Fail}, []string{"fail-rate"}},
		{[]Kind{Delay, Healthy}, []string{"delay", "healthy"}},
	} {
		seen := count(Fault(nil, c.kinds...))
		var got []string
		for k := range seen {
			got = append(got, k)
		}
		slices.Sort(got)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Fault(%v) drew kinds mismatch (-want +got):\n%s", c.kinds, diff)
		}
	}

	rate := regexp.MustCompile(`^fail-rate\(([0-9.]+), seed \d+\)$`)
	partial := 0
	for _, f := range examples(Fault(nil, Fail), 300) {
		m := rate.FindStringSubmatch(f.String())
		if m == nil {
			t.Fatalf("Fault(Fail) drew %v", f)
		}
		r, _ := strconv.ParseFloat(m[1], 64)
		switch {
		case r == 1:
		case r >= 0.01 && r <= 0.99:
			partial++
		default:
			t.Errorf("Fault(Fail) drew rate %v, want 1 or in [0.01, 0.99]", r)
		}
	}
	if partial == 0 {
		t.Error("Fault(Fail) drew no partial rate in 300 draws")
	}

	var hints []time.Duration
	for _, f := range examples(Fault(nil, RetryAfter), 300) {
		d, err := time.ParseDuration(strings.TrimSuffix(strings.TrimPrefix(f.String(), "retry-after("), ")"))
		if err != nil {
			t.Fatalf("Fault(RetryAfter) drew %v", f)
		}
		if d < 0 || d > 10*time.Second || !wholeMillis(d) {
			t.Errorf("Fault(RetryAfter) drew a hint of %v, want whole milliseconds in [0, 10s]", d)
		}
		hints = append(hints, d)
	}
	if slices.Max(hints) < time.Second {
		t.Errorf("Fault(RetryAfter) drew hints of at most %v in 300 draws, want some of seconds", slices.Max(hints))
	}
}

// TestFaultKeepsTheCallersKinds checks that Fault neither sorts nor
// keeps the caller's slice of kinds.
func TestFaultKeepsTheCallersKinds(t *testing.T) {
	kinds := []Kind{Panic, Healthy}
	g := Fault(nil, kinds...)
	kinds[0] = Fail
	if diff := cmp.Diff([]Kind{Fail, Healthy}, kinds); diff != "" {
		t.Errorf("the caller's kinds mismatch (-want +got):\n%s", diff)
	}
	for _, f := range examples(g, 100) {
		if s := f.String(); s != "healthy" && !strings.HasPrefix(s, "panic(") {
			t.Fatalf("Fault(Panic, Healthy) drew %v after the caller changed its slice", f)
		}
	}
}

// TestInvalidKind checks that a kind below Healthy panics as one above
// Panic does.
func TestInvalidKind(t *testing.T) {
	defer func() {
		if r, want := recover(), "rapidgen: Fault kind must be one of Healthy..Panic, got -1"; r != want {
			t.Errorf("panic = %v, want %q", r, want)
		}
	}()
	Fault(nil, Healthy, -1)
}

// TestTimelineSteps checks that a timeline has 1 to 8 steps, the first at
// 0, the others in whole milliseconds within the span, in order.
func TestTimelineSteps(t *testing.T) {
	step := regexp.MustCompile(`(?:\(|, )([0-9a-zµ.]+) healthy`)
	counts := make(map[int]bool)
	var latest time.Duration
	for _, f := range examples(Timeline(nil, time.Minute, Healthy), 300) {
		s := f.String()
		var ats []time.Duration
		for _, m := range step.FindAllStringSubmatch(s, -1) {
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			ats = append(ats, d)
		}
		if len(ats) < 1 || len(ats) > 8 || ats[0] != 0 {
			t.Fatalf("%s: %d steps, the first at %v; want 1 to 8, the first at 0", s, len(ats), ats)
		}
		for i, at := range ats {
			if at > time.Minute || !wholeMillis(at) || (i > 0 && at < ats[i-1]) {
				t.Fatalf("%s: step %d at %v, want whole milliseconds in [0, 1m], in order", s, i, at)
			}
		}
		counts[len(ats)] = true
		latest = max(latest, ats[len(ats)-1])
	}
	if len(counts) < 4 {
		t.Errorf("300 timelines had only %d different numbers of steps", len(counts))
	}
	if latest < time.Second {
		t.Errorf("300 timelines over 1m had steps at most at %v", latest)
	}
}

// TestLatencyParameters checks that Latency draws each distribution, with
// parameters in whole milliseconds: fixed in [0, 1s], uniform with
// 0 <= lo <= hi <= 1s, exponential with a mean in [0, 250ms].
func TestLatencyParameters(t *testing.T) {
	var (
		fixed   = regexp.MustCompile(`^fixed\((.+)\)$`)
		uniform = regexp.MustCompile(`^uniform\((.+), (.+), seed \d+\)$`)
		expo    = regexp.MustCompile(`^exponential\((.+), seed \d+\)$`)
	)
	parse := func(l resiliencetest.Latency, s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || !wholeMillis(d) {
			t.Fatalf("%v: %q is not whole milliseconds >= 0", l, s)
		}
		return d
	}
	seen := make(map[string]time.Duration) // the largest parameter of each
	for _, l := range examples(Latency(), 300) {
		s := l.String()
		switch {
		case fixed.MatchString(s):
			d := parse(l, fixed.FindStringSubmatch(s)[1])
			if d > time.Second {
				t.Errorf("%v: above 1s", l)
			}
			seen["fixed"] = max(seen["fixed"], d)
		case uniform.MatchString(s):
			m := uniform.FindStringSubmatch(s)
			lo, hi := parse(l, m[1]), parse(l, m[2])
			if lo > hi || hi > time.Second {
				t.Errorf("%v: want 0 <= lo <= hi <= 1s", l)
			}
			seen["uniform"] = max(seen["uniform"], hi)
		case expo.MatchString(s):
			d := parse(l, expo.FindStringSubmatch(s)[1])
			if d > 250*time.Millisecond {
				t.Errorf("%v: a mean above 250ms", l)
			}
			seen["exponential"] = max(seen["exponential"], d)
		default:
			t.Fatalf("Latency drew %v", l)
		}
	}
	for _, k := range []string{"fixed", "uniform", "exponential"} {
		if d, ok := seen[k]; !ok || d == 0 {
			t.Errorf("300 latencies drew no %s latency other than 0 (largest %v)", k, d)
		}
	}
}

// TestDurationGranularity checks that Duration draws in [lo, hi], in
// whole milliseconds above lo when the range spans one (so a range of
// exactly 1ms draws lo or hi), and in nanoseconds when it is shorter.
func TestDurationGranularity(t *testing.T) {
	lo := 7*time.Second + 3 // not whole milliseconds
	for _, c := range []struct {
		hi   time.Duration
		step time.Duration
	}{
		{lo + time.Millisecond, time.Millisecond},
		{lo + 5*time.Second, time.Millisecond},
		{lo + 999, 1},
	} {
		inner := false
		for _, d := range examples(Duration(lo, c.hi), 200) {
			if d < lo || d > c.hi || (d-lo)%c.step != 0 {
				t.Fatalf("Duration(%v, %v) drew %v: want steps of %v in the range", lo, c.hi, d, c.step)
			}
			inner = inner || d > lo && d < c.hi
		}
		if !inner && c.hi-lo > c.step {
			t.Errorf("Duration(%v, %v) drew no value strictly inside the range in 200 draws", lo, c.hi)
		}
	}
}

// TestBackoffParameters checks that Backoff draws each growth with
// parameters in whole milliseconds: base in [1ms, 1s], a linear step in
// [0, 1s], a max in [base, 10s], a multiplier in [1, 4] in tenths.
func TestBackoffParameters(t *testing.T) {
	var (
		constant = regexp.MustCompile(`^constant\(([^,)]+)`)
		linear   = regexp.MustCompile(`^linear\(([^+]+)\+([^,]+), max ([^,)]+)`)
		expo     = regexp.MustCompile(`^exponential\(([^×]+)×([^,]+), max ([^,)]+)`)
	)
	parse := func(s backoff.Schedule, v string) time.Duration {
		d, err := time.ParseDuration(v)
		if err != nil || !wholeMillis(d) || d < 0 {
			t.Fatalf("%v: %q is not whole milliseconds >= 0", s, v)
		}
		return d
	}
	checkBase := func(s backoff.Schedule, base time.Duration) {
		if base < time.Millisecond || base > time.Second {
			t.Errorf("%v: base outside [1ms, 1s]", s)
		}
	}
	checkMax := func(s backoff.Schedule, base, m time.Duration) {
		if m < base || m > 10*time.Second {
			t.Errorf("%v: max outside [base, 10s]", s)
		}
	}
	seen := make(map[string]bool)
	minMult, steps := 5.0, false
	for _, s := range examples(Backoff(), 300) {
		str := s.String()
		switch {
		case constant.MatchString(str):
			checkBase(s, parse(s, constant.FindStringSubmatch(str)[1]))
			seen["constant"] = true
		case linear.MatchString(str):
			m := linear.FindStringSubmatch(str)
			base, step, mx := parse(s, m[1]), parse(s, m[2]), parse(s, m[3])
			checkBase(s, base)
			checkMax(s, base, mx)
			if step > time.Second {
				t.Errorf("%v: step above 1s", s)
			}
			steps = steps || step > 0
			seen["linear"] = true
		case expo.MatchString(str):
			m := expo.FindStringSubmatch(str)
			base, mx := parse(s, m[1]), parse(s, m[3])
			checkBase(s, base)
			checkMax(s, base, mx)
			mult, err := strconv.ParseFloat(m[2], 64)
			if err != nil || mult < 1 || mult > 4 || mult*10 != float64(int(mult*10+0.5)) {
				t.Errorf("%v: multiplier not in [1, 4] in tenths", s)
			}
			minMult = min(minMult, mult)
			seen["exponential"] = true
		default:
			t.Fatalf("Backoff drew %v", s)
		}
		for _, j := range []string{"full", "equal", "decorrelated"} {
			if strings.Contains(str, ", "+j+" jitter)") {
				seen[j] = true
			}
		}
	}
	for _, k := range []string{"constant", "linear", "exponential", "full", "equal", "decorrelated"} {
		if !seen[k] {
			t.Errorf("300 backoffs drew no %s", k)
		}
	}
	if !steps {
		t.Error("300 backoffs drew no linear step other than 0")
	}
	if minMult != 1 {
		t.Errorf("300 backoffs drew multipliers of at least %v, want 1 among them", minMult)
	}
}

// TestRetryMaxElapsed checks that RetrySettings.Options bound the retry
// by MaxElapsed when it is set, however short, and not when it is 0; and
// that String leaves out a MaxElapsed of 0.
func TestRetryMaxElapsed(t *testing.T) {
	calls := func(s RetrySettings) int64 {
		fake := clock.NewFake()
		dep := resiliencetest.NewDependency(1, resiliencetest.Fail(nil))
		p := retry.New[int](s.Options(fake)...)
		if err := resiliencetest.Drive(fake, 100*time.Millisecond, func() { _, _ = p.Do(context.Background(), dep.Call) }); err != nil {
			t.Fatal(err)
		}
		return dep.Calls()
	}
	unbounded := RetrySettings{Attempts: 3, Backoff: backoff.Constant(time.Second)}
	if got := calls(unbounded); got != 3 {
		t.Errorf("%v: %d calls, want 3", unbounded, got)
	}
	if got, want := unbounded.String(), "retry{Attempts: 3, Backoff: constant(1s)}"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	bounded := unbounded
	bounded.MaxElapsed = 1 // no wait fits
	if got := calls(bounded); got != 1 {
		t.Errorf("%v: %d calls, want 1", bounded, got)
	}
	if got, want := bounded.String(), "retry{Attempts: 3, Backoff: constant(1s), MaxElapsed: 1ns}"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestRetryDrawsBothBounds checks that Retry draws settings with and
// without a MaxElapsed, which is in whole milliseconds in [1ms, 30s], and
// attempts in [1, 6].
func TestRetryDrawsBothBounds(t *testing.T) {
	with, without := 0, 0
	for _, s := range examples(Retry(), 200) {
		if s.Attempts < 1 || s.Attempts > 6 {
			t.Errorf("%v: attempts outside [1, 6]", s)
		}
		switch {
		case s.MaxElapsed == 0:
			without++
		case s.MaxElapsed < time.Millisecond || s.MaxElapsed > 30*time.Second || !wholeMillis(s.MaxElapsed):
			t.Errorf("%v: MaxElapsed not whole milliseconds in [1ms, 30s]", s)
		default:
			with++
		}
	}
	if with == 0 || without == 0 {
		t.Errorf("200 retries: %d with a MaxElapsed, %d without; want both", with, without)
	}
}

// Command httpclient shows the library doing its main job on real HTTP
// traffic. It starts a price server on 127.0.0.1 that serves normally, then
// fails (500s), then hangs, then recovers, and calls it at a steady rate
// through one client pipeline:
//
//	fallback(prices) > retry(prices) > breaker(prices) > timeout(150ms)
//
// It logs what the policies do through a telemetry.Slog (each breaker
// transition as it happens; the retries that give up and the fallback's
// answers, at most a line a second each),
// prints a line per second read from the breaker's Stats (through a
// telemetry.Registry) and from a telemetry.Counter of the policies' events, and
// a summary of how many calls reached the server during the outage against how
// many the callers made. It exits 1 if the run did not show
// the breaker going closed → open → half-open → closed, or if the breaker did
// not shield the server.
//
//	go run ./examples/httpclient
//	go run ./examples/httpclient -rate 50 -phase 2s -timeout 100ms
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// config is what the flags set.
type config struct {
	rate       float64       // calls per second
	phase      time.Duration // length of each server phase
	timeout    time.Duration // per attempt, up to the response headers
	attempts   int           // per call, the first included
	maxElapsed time.Duration // per call, waits included
	cooldown   time.Duration // first cooldown; it doubles while trials fail
	ratio      float64       // failure ratio that trips the breaker
	window     int           // calls in the breaker's window
}

func main() {
	var c config
	flag.Float64Var(&c.rate, "rate", 25, "calls per second")
	flag.DurationVar(&c.phase, "phase", 2500*time.Millisecond, "length of each server phase: healthy, failing, hanging, recovered")
	flag.DurationVar(&c.timeout, "timeout", 150*time.Millisecond, "timeout of each attempt")
	flag.IntVar(&c.attempts, "attempts", 3, "attempts per call, the first included")
	flag.DurationVar(&c.maxElapsed, "max-elapsed", 400*time.Millisecond, "time a call may spend retrying, waits included")
	flag.DurationVar(&c.cooldown, "cooldown", 500*time.Millisecond, "first cooldown of the breaker (doubles while trials fail, up to 4x)")
	flag.Float64Var(&c.ratio, "ratio", 0.5, "failure ratio that trips the breaker")
	flag.IntVar(&c.window, "window", 20, "calls in the breaker's sliding window")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "httpclient: unexpected arguments %q (flags only; -h lists them)\n", flag.Args())
		os.Exit(2)
	}
	if err := validate(c); err != nil {
		fmt.Fprintln(os.Stderr, "httpclient:", err)
		os.Exit(2)
	}
	if !run(c, os.Stdout) {
		os.Exit(1)
	}
}

func validate(c config) error {
	switch {
	case !(c.rate > 0 && c.rate <= 1000):
		return fmt.Errorf("-rate must be in (0, 1000], got %v", c.rate)
	case c.phase < 500*time.Millisecond:
		return fmt.Errorf("-phase must be >= 500ms, got %v", c.phase)
	case c.timeout <= 0:
		return fmt.Errorf("-timeout must be > 0, got %v", c.timeout)
	case c.attempts < 1:
		return fmt.Errorf("-attempts must be >= 1 (1 = no retry), got %d", c.attempts)
	case c.maxElapsed <= 0:
		return fmt.Errorf("-max-elapsed must be > 0, got %v", c.maxElapsed)
	case c.cooldown <= 0:
		return fmt.Errorf("-cooldown must be > 0, got %v", c.cooldown)
	case c.window < 2:
		return fmt.Errorf("-window must be >= 2 (the ratio applies from window/2 calls on), got %d", c.window)
	}
	cfg := retry.Config{Attempts: c.attempts, MaxElapsed: c.maxElapsed}
	if err := cfg.Validate(); err != nil {
		return err
	}
	return breakerConfig(c, nil).Validate()
}

func breakerConfig(c config, obs telemetry.Observer) breaker.Config {
	return breaker.Config{
		Name:            "prices",
		FailureRatio:    c.ratio,
		WindowCalls:     c.window,
		MinCalls:        c.window / 2,
		CooldownBackoff: backoff.Exponential(c.cooldown, 2, 4*c.cooldown),
		Observer:        obs,
	}
}

// phase is what the server does at a moment of the run.
type phase int

const (
	healthy phase = iota
	failing
	hanging
	recovered
)

func (p phase) String() string {
	return [...]string{"healthy", "failing", "hanging", "recovered"}[p]
}

// outage reports whether the server is down in phase p.
func (p phase) outage() bool { return p == failing || p == hanging }

// stats are the example's own counters of one second, or of a phase: what
// the callers and the server see. What the policies do comes from their
// Stats and events.
type stats struct {
	calls, ok, hits atomic.Int64
}

func run(c config, out io.Writer) bool {
	start := time.Now()
	phaseAt := func(t time.Time) phase { return phase(min(int(t.Sub(start)/c.phase), int(recovered))) }
	duration := 4 * c.phase

	var perPhase [4]stats // by phase: calls made and server hits
	var second stats      // the current second's counters, reset each tick

	// The server: a price endpoint that misbehaves on cue.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(out, "httpclient:", err)
		return false
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := phaseAt(time.Now())
		perPhase[p].hits.Add(1)
		second.hits.Add(1)
		switch p {
		case failing:
			http.Error(w, "database unavailable", http.StatusInternalServerError)
		case hanging:
			select { // hang until the client gives up (or the phase ends)
			case <-r.Context().Done():
			case <-time.After(c.phase):
			}
		default:
			fmt.Fprint(w, "42.00")
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	// What the policies do: transitions and give-ups logged through slog
	// (each line stamped with the time since the start), every event
	// counted for the table, and the transitions kept for the final check.
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.String("t", fmt.Sprintf("%.1fs", a.Value.Time().Sub(start).Seconds()))
			}
			return a
		},
	}))
	var events telemetry.Counter
	var transitions []string
	var mu sync.Mutex
	obs := telemetry.Multi(telemetry.NewSlog(logger, nil), &events, telemetry.ObserverFunc(func(e telemetry.Event) {
		if e.To != "" {
			mu.Lock()
			transitions = append(transitions, e.To)
			mu.Unlock()
		}
	}))

	// The client: one breaker for the dependency, one pipeline for its
	// calls, both in a registry, where the table reads them.
	reg := telemetry.NewRegistry()
	b := breaker.New(breaker.WithConfig(breakerConfig(c, obs)))
	pipeline := resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (*http.Response, error) {
			return cached(), nil
		}, resilience.WithFallbackName("prices"), resilience.WithFallbackObserver(obs)),
		retry.New[*http.Response](
			retry.WithName("prices"),
			retry.WithAttempts(c.attempts),
			retry.WithMaxElapsed(c.maxElapsed),
			retry.WithBackoff(backoff.Exponential(20*time.Millisecond, 2, 200*time.Millisecond).WithJitter(backoff.Full)),
			retry.WithObserver(obs),
		),
		breaker.Policy[*http.Response](b),
		timeout.New[*http.Response](c.timeout, timeout.WithName("prices"), timeout.WithObserver(obs)),
	)
	if err := errors.Join(reg.Register(b), reg.RegisterPipeline("prices", pipeline)); err != nil {
		fmt.Fprintln(out, "httpclient:", err)
		return false
	}
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: pipeline}}
	for _, p := range reg.Pipelines() {
		fmt.Fprintf(out, "pipeline %s: %s\n", p.Name, p.Chain)
	}
	fmt.Fprintf(out, "server: http://%s, phases of %v: healthy, failing (500s), hanging, recovered\n\n", ln.Addr(), c.phase)
	fmt.Fprintf(out, "each second: calls started; of the calls that ended, how many got the server's\n"+
		"answer (ok); requests that reached the server; from the policies' events:\n"+
		"answers from the fallback (fallback.used), attempts timed out\n"+
		"(timeout.expired), retries made (retry.waiting) and calls given up\n"+
		"(retry.gave_up); from the breaker's Stats: attempts it refused, its state,\n"+
		"and the failures/calls in its window\n\n")
	fmt.Fprintf(out, "%6s  %-9s  %7s  %4s  %11s  %9s  %8s  %7s  %7s  %7s  %-9s  %s\n",
		"time", "server", "started", "ok", "server hits", "fallbacks", "timeouts", "retries", "gave up", "refused", "breaker", "window")

	lastPrint := start
	var last struct{ fallbacks, timeouts, retries, gaveUp, refused uint64 } // the totals at the last line
	printSecond := func(now time.Time) {
		lastPrint = now
		fallbacks, timeouts := events.Count("prices", resilience.EventFallbackUsed), events.Count("prices", timeout.EventExpired)
		retries, gaveUp := events.Count("prices", retry.EventWaiting), events.Count("prices", retry.EventGaveUp)
		for _, s := range reg.Snapshots() { // one guard: the breaker
			fmt.Fprintf(out, "%5.1fs  %-9s  %7d  %4d  %11d  %9d  %8d  %7d  %7d  %7d  %-9s  %d/%d\n",
				now.Sub(start).Seconds(), phaseAt(now.Add(-time.Millisecond)),
				second.calls.Swap(0), second.ok.Swap(0), second.hits.Swap(0),
				fallbacks-last.fallbacks, timeouts-last.timeouts, retries-last.retries, gaveUp-last.gaveUp, s.Refused-last.refused,
				s.State, value(s, "window_failures"), value(s, "window_calls"))
			last.fallbacks, last.timeouts, last.retries, last.gaveUp, last.refused = fallbacks, timeouts, retries, gaveUp, s.Refused
		}
	}

	// The callers: a steady rate, each call on its own goroutine, as a
	// server's request handlers would make them.
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	report := time.NewTicker(time.Second)
	defer tick.Stop()
	defer report.Stop()
	end := time.After(duration)
	url := "http://" + ln.Addr().String() + "/price"
loop:
	for {
		select {
		case now := <-tick.C:
			p := phaseAt(now)
			perPhase[p].calls.Add(1)
			second.calls.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(url)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
				if resp.StatusCode == http.StatusOK && resp.Header.Get("X-From-Cache") == "" {
					second.ok.Add(1)
				}
			}()
		case now := <-report.C:
			printSecond(now)
		case now := <-end:
			if now.Sub(lastPrint) > 100*time.Millisecond { // else the report just printed it
				printSecond(now)
			}
			break loop
		}
	}
	wg.Wait()

	// The summary.
	var outageCalls, outageHits int64
	fmt.Fprintf(out, "\nsummary by server phase:\n")
	for p := healthy; p <= recovered; p++ {
		calls, hits := perPhase[p].calls.Load(), perPhase[p].hits.Load()
		fmt.Fprintf(out, "  %-9s  callers made %4d calls, %4d requests reached the server\n", p, calls, hits)
		if p.outage() {
			outageCalls += calls
			outageHits += hits
		}
	}
	fmt.Fprintf(out, "during the outage: callers made %d calls, the server got %d requests (%.0f%% of the calls; without the breaker, up to %d attempts each)\n",
		outageCalls, outageHits, 100*float64(outageHits)/float64(max(outageCalls, 1)), c.attempts)

	fmt.Fprintf(out, "events counted:")
	for _, n := range events.Counts() {
		fmt.Fprintf(out, " %s %d", n.Type, n.N)
	}
	fmt.Fprintln(out)

	mu.Lock()
	seen := strings.Join(transitions, " ")
	mu.Unlock()
	ok := true
	if !strings.Contains(seen, "open half-open closed") {
		fmt.Fprintf(out, "FAIL: the breaker did not go closed -> open -> half-open -> closed (transitions to: %s)\n", seen)
		ok = false
	}
	if outageHits >= outageCalls {
		fmt.Fprintf(out, "FAIL: the breaker did not shield the server: %d requests for %d calls\n", outageHits, outageCalls)
		ok = false
	}
	if ok {
		fmt.Fprintf(out, "breaker went: closed -> %s\n", strings.ReplaceAll(seen, " ", " -> "))
	}
	return ok
}

// cached is the fallback: the last known price, marked as such.
func cached() *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Status:     "200 OK",
		Header:     http.Header{"X-From-Cache": {"1"}},
		Body:       io.NopCloser(strings.NewReader("41.50")),
	}
}

// value returns the value of s named name, as an integer (0 if s has
// none).
func value(s telemetry.Snapshot, name string) uint64 {
	v, _ := s.Value(name)
	return uint64(v)
}

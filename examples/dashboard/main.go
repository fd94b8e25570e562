// Command dashboard serves the live dashboard of package dashboard over
// the outage of examples/httpclient, running in a loop: a price server
// that serves, fails (500s), hangs and recovers, called at a steady rate
// through
//
//	fallback(prices) > retry(prices) > breaker(prices) > timeout(150ms)
//
// with the registry as the policies' one observer: the dashboard gets the
// retry's attempt durations (calls, errors, latency) from it, with no
// layer of its own in the chain.
// beside three other dependencies (one healthy, one slow-tailed, one
// whose breaker is forced open). Open the address it prints: the prices
// tile turns red a moment after each outage starts, amber while its
// breaker tries, and green again after the recovery.
//
//	go run ./examples/dashboard                      # until interrupted, on 127.0.0.1:8080
//	go run ./examples/dashboard -addr 127.0.0.1:0 -duration 30s
//
// It prints each phase of the outage and each transition of the prices
// breaker as they happen, and exits 1 if a failing phase ended without the
// breaker opening, or a recovered phase without it closing again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/f0b5b96b/resilience/internal/dashdemo"
	"github.com/f0b5b96b/resilience/telemetry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address of the dashboard (port 0: any free port)")
	duration := flag.Duration("duration", 0, "how long to run; 0: until interrupted")
	var c dashdemo.Config
	flag.Float64Var(&c.Rate, "rate", 25, "calls per second to each dependency")
	flag.DurationVar(&c.Phase, "phase", 5*time.Second, "length of each phase of the outage: healthy, failing, hanging, recovered")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dashboard: unexpected arguments %q (flags only; -h lists them)\n", flag.Args())
		os.Exit(2)
	}
	if *duration < 0 {
		fmt.Fprintf(os.Stderr, "dashboard: -duration must be >= 0, got %v\n", *duration)
		os.Exit(2)
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if !run(ctx, *addr, c, os.Stdout) {
		os.Exit(1)
	}
}

// run serves the dashboard on addr and runs the scenario until ctx is
// done; it reports whether the prices breaker did its job.
func run(ctx context.Context, addr string, c dashdemo.Config, out io.Writer) bool {
	demo, err := dashdemo.New(c)
	if err != nil {
		fmt.Fprintln(out, "dashboard:", err)
		return false
	}
	defer demo.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(out, "dashboard:", err)
		return false
	}
	// The streams end with the server's base context, so Shutdown need
	// not wait for them.
	base, cancelBase := context.WithCancel(context.Background())
	srv := &http.Server{Handler: demo.Dashboard, BaseContext: func(net.Listener) context.Context { return base }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(out, "dashboard: http://%s/  (snapshots: http://%[1]s/snapshot.json, stream: http://%[1]s/events)\n", ln.Addr())
	for _, p := range demo.Registry.Pipelines() {
		fmt.Fprintf(out, "pipeline %-15s %s\n", p.Name, p.Chain)
	}

	start := time.Now()
	var outages, recoveries int
	watch := time.NewTicker(100 * time.Millisecond)
	defer watch.Stop()
	phases := make(chan dashdemo.Phase, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		demo.Run(ctx, func(p dashdemo.Phase) { phases <- p })
	}()
	state := func() telemetry.Snapshot {
		for _, s := range demo.Registry.Snapshots() {
			if s.Name == "prices" {
				return s
			}
		}
		return telemetry.Snapshot{}
	}
	last := state()
	// The checks: each failing phase opens the breaker before it ends,
	// and each recovered phase closes it before it ends.
	var opened, closed int
	var failures []string
	openedNow, closedNow := false, false
loop:
	for {
		select {
		case <-done:
			break loop
		case p := <-phases:
			now := time.Since(start).Seconds()
			fmt.Fprintf(out, "%6.1fs  prices server: %s\n", now, p)
			switch p {
			case dashdemo.Failing:
				outages++
				openedNow = false
			case dashdemo.Hanging:
				if !openedNow {
					failures = append(failures, fmt.Sprintf("%.1fs: the prices server failed for a phase and its breaker did not open", now))
				}
			case dashdemo.Recovered:
				recoveries++
				closedNow = false
			case dashdemo.Healthy:
				if recoveries > 0 && !closedNow {
					failures = append(failures, fmt.Sprintf("%.1fs: the prices server recovered for a phase and its breaker did not close", now))
				}
			}
		case <-watch.C:
			s := state()
			if s.State != last.State {
				fmt.Fprintf(out, "%6.1fs  breaker prices: %s -> %s\n", time.Since(start).Seconds(), last.State, s.State)
				switch s.State {
				case telemetry.StateOpen:
					opened++
					openedNow = true
				case telemetry.StateClosed:
					closed++
					closedNow = true
				}
			}
			last = s
		}
	}
	cancelBase()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		fmt.Fprintln(out, "dashboard: shutdown:", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(out, "dashboard: serve:", err)
	}
	fmt.Fprintf(out, "ran %.1fs: %d outages, %d recoveries; breaker prices opened %d times, closed %d times; %d calls refused\n",
		time.Since(start).Seconds(), outages, recoveries, opened, closed, last.Refused)
	for _, f := range failures {
		fmt.Fprintln(out, "FAIL:", f)
	}
	return len(failures) == 0
}

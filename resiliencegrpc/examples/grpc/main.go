// Command grpc shows resiliencegrpc on real gRPC traffic. It starts a
// server on 127.0.0.1 that answers normally, then fails (Unavailable, with
// a pushback of 50 ms), then recovers, and calls it at a steady rate
// through one client pipeline, on a unary method and on a server-streaming
// one:
//
//	retry > breaker(backend) > timeout
//
// It prints a line per second of what happened, each breaker transition as
// it happens, and a summary of how many calls reached the server during the
// outage against how many the callers made. It exits 1 if the run did not
// show the breaker going closed → open → half-open → closed, or if the
// breaker did not shield the server.
//
//	go run ./examples/grpc
//	go run ./examples/grpc -rate 50 -phase 2s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
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
	"github.com/f0b5b96b/resilience/resiliencegrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// config is what the flags set.
type config struct {
	rate  float64       // calls per second
	phase time.Duration // length of each server phase
}

func main() {
	var c config
	flag.Float64Var(&c.rate, "rate", 40, "calls per second")
	flag.DurationVar(&c.phase, "phase", 1500*time.Millisecond, "length of each server phase: healthy, failing, recovered")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "grpc: unexpected arguments %q (flags only; -h lists them)\n", flag.Args())
		os.Exit(2)
	case !(c.rate > 0 && c.rate <= 1000):
		fmt.Fprintf(os.Stderr, "grpc: -rate must be in (0, 1000], got %v\n", c.rate)
		os.Exit(2)
	case c.phase < 500*time.Millisecond:
		fmt.Fprintf(os.Stderr, "grpc: -phase must be >= 500ms, got %v\n", c.phase)
		os.Exit(2)
	}
	if !run(c, os.Stdout) {
		os.Exit(1)
	}
}

// phase is what the server does at a moment of the run.
type phase int

const (
	healthy phase = iota
	failing
	recovered
)

func (p phase) String() string { return [...]string{"healthy", "failing", "recovered"}[p] }

// counters are the counts of one second, or of a phase.
type counters struct {
	calls, ok, failed, refused, retries, hits atomic.Int64
}

// server is the backend: it misbehaves on cue.
type server struct {
	testpb.UnimplementedTestServiceServer
	phaseAt  func(time.Time) phase
	perPhase *[3]counters
	second   *counters
}

// hit counts a request and reports whether the server is failing.
func (s *server) hit() bool {
	p := s.phaseAt(time.Now())
	s.perPhase[p].hits.Add(1)
	s.second.hits.Add(1)
	return p == failing
}

func down(ctx context.Context) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs(resiliencegrpc.PushbackKey, "50"))
	return status.Error(codes.Unavailable, "database down")
}

func (s *server) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if s.hit() {
		return nil, down(ctx)
	}
	return &testpb.SimpleResponse{Payload: req.GetPayload()}, nil
}

func (s *server) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if s.hit() {
		return down(stream.Context())
	}
	for range 3 {
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
	return nil
}

func run(c config, out io.Writer) bool {
	start := time.Now()
	phaseAt := func(t time.Time) phase { return phase(min(int(t.Sub(start)/c.phase), int(recovered))) }
	duration := 3 * c.phase
	var perPhase [3]counters
	var second counters

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(out, "grpc:", err)
		return false
	}
	srv := grpc.NewServer()
	testpb.RegisterTestServiceServer(srv, &server{phaseAt: phaseAt, perPhase: &perPhase, second: &second})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	defer func() {
		srv.Stop()
		<-served
	}()

	// The client: one breaker for the backend, one pipeline for all its
	// methods, unary and streaming.
	var mu sync.Mutex
	var transitions []string
	b := breaker.New(
		breaker.WithName("backend"),
		breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(20), breaker.WithMinCalls(10),
		breaker.WithCooldownBackoff(backoff.Exponential(300*time.Millisecond, 2, 1200*time.Millisecond)),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			mu.Lock()
			transitions = append(transitions, tr.To.String())
			mu.Unlock()
			fmt.Fprintf(out, "%5.1fs  breaker(%s): %s -> %s (%d calls, %d failures in the state left)\n",
				tr.At.Sub(start).Seconds(), tr.Name, tr.From, tr.To, tr.Counts.Calls, tr.Counts.Failures)
		}),
	)
	pipeline := resilience.Then(
		retry.New[any](
			retry.WithAttempts(3),
			retry.WithMaxElapsed(300*time.Millisecond),
			retry.WithBackoff(backoff.Exponential(20*time.Millisecond, 2, 100*time.Millisecond).WithJitter(backoff.Full)),
			retry.WithOnRetry(func(int, error, time.Duration) { second.retries.Add(1) }),
		),
		breaker.Policy[any](b),
		timeout.New[any](200*time.Millisecond),
	)
	cc, err := grpc.NewClient(ln.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(), // the pipeline retries
		grpc.WithUnaryInterceptor(resiliencegrpc.UnaryClientInterceptor(pipeline)),
		grpc.WithStreamInterceptor(resiliencegrpc.StreamClientInterceptor(pipeline, resiliencegrpc.WithBreaker(b))),
	)
	if err != nil {
		fmt.Fprintln(out, "grpc:", err)
		return false
	}
	defer cc.Close()
	client := testpb.NewTestServiceClient(cc)

	fmt.Fprintf(out, "pipeline: %v\nserver: %s, phases of %v: healthy, failing (Unavailable, pushback 50ms), recovered\n\n", pipeline, ln.Addr(), c.phase)
	fmt.Fprintf(out, "each second: calls started (every 4th a stream); of those that ended, how many\n"+
		"succeeded, failed, or were refused by the breaker; retries made; calls that\n"+
		"reached the server; the breaker's state\n\n")
	fmt.Fprintf(out, "%6s  %-9s  %7s  %4s  %6s  %7s  %7s  %11s  %s\n", "time", "server", "started", "ok", "failed", "refused", "retries", "server hits", "breaker")
	lastPrint := start
	printSecond := func(now time.Time) {
		lastPrint = now
		fmt.Fprintf(out, "%5.1fs  %-9s  %7d  %4d  %6d  %7d  %7d  %11d  %s\n",
			now.Sub(start).Seconds(), phaseAt(now.Add(-time.Millisecond)),
			second.calls.Swap(0), second.ok.Swap(0), second.failed.Swap(0),
			second.refused.Swap(0), second.retries.Swap(0), second.hits.Swap(0), b.State())
	}

	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	report := time.NewTicker(time.Second)
	defer tick.Stop()
	defer report.Stop()
	end := time.After(duration)
	n := 0
loop:
	for {
		select {
		case now := <-tick.C:
			perPhase[phaseAt(now)].calls.Add(1)
			second.calls.Add(1)
			n++
			stream := n%4 == 0
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				var err error
				if stream {
					err = readStream(ctx, client)
				} else {
					_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte("ping")}})
				}
				switch {
				case err == nil:
					second.ok.Add(1)
				case errors.Is(err, resilience.ErrRefused):
					second.refused.Add(1)
				default:
					second.failed.Add(1)
				}
			}()
		case now := <-report.C:
			printSecond(now)
		case now := <-end:
			if now.Sub(lastPrint) > 100*time.Millisecond {
				printSecond(now)
			}
			break loop
		}
	}
	wg.Wait()

	fmt.Fprintf(out, "\nsummary by server phase:\n")
	for p := healthy; p <= recovered; p++ {
		fmt.Fprintf(out, "  %-9s  callers made %4d calls, %4d reached the server\n", p, perPhase[p].calls.Load(), perPhase[p].hits.Load())
	}
	outageCalls, outageHits := perPhase[failing].calls.Load(), perPhase[failing].hits.Load()
	fmt.Fprintf(out, "during the outage: callers made %d calls, the server got %d (%.0f%% of the calls; without the breaker, up to 3 attempts each)\n",
		outageCalls, outageHits, 100*float64(outageHits)/float64(max(outageCalls, 1)))

	mu.Lock()
	seen := strings.Join(transitions, " ")
	mu.Unlock()
	ok := true
	if !strings.Contains(seen, "open half-open closed") {
		fmt.Fprintf(out, "FAIL: the breaker did not go closed -> open -> half-open -> closed (transitions to: %s)\n", seen)
		ok = false
	}
	if outageHits >= outageCalls {
		fmt.Fprintf(out, "FAIL: the breaker did not shield the server: %d calls reached it for %d calls made\n", outageHits, outageCalls)
		ok = false
	}
	if ok {
		fmt.Fprintf(out, "breaker went: closed -> %s\n", strings.ReplaceAll(seen, " ", " -> "))
	}
	return ok
}

// readStream reads a server stream to its end.
func readStream(ctx context.Context, client testpb.TestServiceClient) error {
	s, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte("ping")}})
	if err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

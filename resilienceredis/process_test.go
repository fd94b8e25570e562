package resilienceredis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// childEnv, when set (to a key prefix), makes the test binary run as one
// instance of TestSeparateProcesses instead of running tests.
const childEnv = "RESILIENCEREDIS_CHILD"

const childFailures, children = 3, 3

// childMain is one instance in a process of its own: it joins the breaker
// (Threshold children·childFailures), fails childFailures calls, waits
// (bounded) until the fleet's breaker is open, and prints the state it
// holds: "open gen ep".
func childMain() int {
	prefix, addr := os.Getenv(childEnv), os.Getenv(redistest.EnvAddr)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Second})
	defer rdb.Close()
	b := NewBreaker(rdb, "svc", WithPrefix(prefix), WithThreshold(children*childFailures),
		WithCooldown(time.Hour), WithFlushInterval(5*time.Millisecond), WithTimeout(time.Second))
	defer b.Close()
	deadline := time.Now().Add(20 * time.Second)
	for b.ep.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for range childFailures {
		if err := fail(b); err != nil {
			fmt.Println("refused", err)
			return 1
		}
		time.Sleep(5 * time.Millisecond) // spread the failures over flushes
	}
	for b.State() != breaker.Open && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the other processes' failures
	}
	fmt.Printf("%v %d %d\n", b.State(), viewGen(b.word.Load()), b.ep.Load())
	return 0
}

// Instances in separate processes (the test binary run again as a
// child): 3 processes fail 3 calls each against a threshold of 9. The
// fleet trips once, on the 9th failure, and every process ends in the same
// generation of the same shared state.
func TestSeparateProcesses(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The children's stdout is their answer; their stderr (a coverage
	// build's warnings, a panic) is kept apart for the failure message.
	outs, stderrs := make([]bytes.Buffer, children), make([]bytes.Buffer, children)
	errs := make([]error, children)
	var wg sync.WaitGroup
	for i := range children {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+prefix, redistest.EnvAddr+"="+addr)
		cmd.Stdout, cmd.Stderr = &outs[i], &stderrs[i]
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	wg.Wait()
	got := map[string]int{}
	for i := range children {
		if errs[i] != nil {
			t.Fatalf("child %d: %v: %s%s", i, errs[i], outs[i].String(), stderrs[i].String())
		}
		got[strings.TrimSpace(outs[i].String())]++
	}
	shared := sharedState(t, newClient(t), prefix)
	want := fmt.Sprintf("open 2 %s", shared["ep"])
	if got[want] != children || shared["gen"] != "2" || shared["st"] != "1" {
		t.Errorf("children ended in %v, shared gen %s st %s; want all %d in %q (one trip, in generation 2)", got, shared["gen"], shared["st"], children, want)
	}
}

package sim

import (
	"runtime"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/goroutines"
)

// TestGroupQuiescentReportsTheGoroutineAskedAbout checks quiescent's
// answer for one goroutine: alive and blocked, alive and running, gone.
func TestGroupQuiescentReportsTheGoroutineAskedAbout(t *testing.T) {
	g := newGroup(goroutines.Current())

	blockedID, runningID := make(chan uint64, 1), make(chan uint64, 1)
	block, stop := make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 2)
	go func() { // blocked on a channel
		blockedID <- goroutines.Current()
		<-block
		done <- struct{}{}
	}()
	go func() { // running until told to stop
		runningID <- goroutines.Current()
		for {
			select {
			case <-stop:
				done <- struct{}{}
				return
			default:
				runtime.Gosched() // runnable, never blocked
			}
		}
	}()
	blocked, running := <-blockedID, <-runningID
	// Both goroutines are of the group: created by its root.

	// Wait (bounded) for the first to block on its channel.
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, alive, isBlocked := g.quiescent(blocked)
		if alive && isBlocked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("quiescent(the goroutine blocked on a channel) = alive %v, blocked %v after 2s, want true, true", alive, isBlocked)
		}
		time.Sleep(time.Millisecond)
	}
	// A goroutine running a loop of selects with a default is never
	// reported blocked; the group is not quiet while it runs.
	for range 20 {
		quiet, alive, isBlocked := g.quiescent(running)
		if !alive || isBlocked || quiet {
			t.Fatalf("quiescent(the running goroutine) = quiet %v, alive %v, blocked %v; want false, true, false", quiet, alive, isBlocked)
		}
	}

	close(stop)
	close(block)
	<-done
	<-done
	deadline = time.Now().Add(2 * time.Second)
	for _, id := range []uint64{blocked, running} {
		for {
			_, alive, isBlocked := g.quiescent(id)
			if !alive && !isBlocked {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("quiescent(%d, which has returned) = alive %v, blocked %v after 2s, want false, false", id, alive, isBlocked)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Once they are gone, the last snapshot's byID holds neither.
	if g.byID[blocked] != nil || g.byID[running] != nil {
		t.Errorf("byID still holds a goroutine that has returned: %v, %v", g.byID[blocked], g.byID[running])
	}
}

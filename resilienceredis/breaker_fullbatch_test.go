package resilienceredis

import (
	"testing"
	"testing/synctest"
	"time"
)

// A batch that fills while the flusher is sending the previous one is
// sent as soon as that round trip ends, not FlushInterval later: the
// flusher is told of it even while it is busy. The clock is a synctest
// bubble's and stands still: FlushInterval never passes.
func TestBreakerFullBatchWhileFlushing(t *testing.T) {
	var gate chan struct{}
	var first bool
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		gate = make(chan struct{})
		rdb.setReply(func(c scriptCall) (any, error) {
			if c.sha == flushScript.Hash() && !first {
				first = true
				<-gate // the first batch's round trip lasts until the test ends it
			}
			return answering(c)
		})
		b := newBreaker(rdb.Client, "svc", []BreakerOption{WithMaxBatch(2), WithFlushInterval(time.Second), WithTimeout(time.Hour)})
		defer b.Close()
		b.wg.Add(1)
		go b.flushLoop()
		synctest.Wait()
		succeed(b)
		succeed(b) // full: the flusher sends it, and waits on Redis
		synctest.Wait()
		if n := rdb.count(flushScript); n != 1 {
			t.Fatalf("2 outcomes (MaxBatch 2): %d batches sent, want 1", n)
		}
		succeed(b)
		succeed(b) // full again, while the flusher waits
		close(gate)
		synctest.Wait()
		if n := rdb.count(flushScript); n != 2 {
			t.Errorf("a second full batch while the first was in flight: %d batches sent, want 2 (the second at once)", n)
		}
	})
}

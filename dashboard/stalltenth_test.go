package dashboard

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
)

// A write that takes a tenth of the write timeout (1 s) has waited: the
// client is not caught up, and writes of 1 s each, a second apart, use
// up the 10 s budget at the sixth, which would end at 11 s.
func TestStreamWriteOfATenthOfTheTimeoutHasWaited(t *testing.T) {
	f := clock.NewFake()
	waits := make([]time.Duration, 8)
	for i := range waits {
		waits[i] = writeTimeout / 10
	}
	w := &stallingWriter{h: http.Header{}, f: f, waits: waits}
	cancel, done := serveStalling(t, w)
	defer cancel()
	for range 5 {
		blockUntil(t, f, 1)
		f.Advance(untilNext(f.Now()))
	}
	recv(t, done, "the stream to end at the sixth write")
	attempts, taken := w.counts()
	if diff := cmp.Diff([]int{6, 5}, []int{attempts, taken}); diff != "" {
		t.Errorf("writes tried, taken mismatch (-want +got):\n%s", diff)
	}
}

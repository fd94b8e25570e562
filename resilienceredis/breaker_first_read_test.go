package resilienceredis

import (
	"net"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// NewBreaker does not wait for Redis, and its instance reads the shared
// state at once: with Redis unreachable (nothing listens at the address)
// it decides alone from its first read (a BreakerLocal event), not a
// ProbeInterval later.
func TestBreakerReadsAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var rec eventlog.Recorder
	b := NewBreaker(clientOf(t, addr), "svc", WithObserver(&rec), WithTimeout(time.Second),
		WithProbeInterval(time.Hour), WithFlushInterval(10*time.Millisecond))
	defer b.Close()
	redistest.Eventually(t, 2*time.Second, "the instance finds Redis unreachable", func() (bool, string) {
		return len(localEvents(&rec, BreakerLocal)) > 0, "no breaker.local event"
	})
}

package resilienceredis

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The flusher's turn (tick) sends the batch, or reads the shared state
// when Redis has not answered for ProbeInterval: a reply (of any round
// trip) is an answer; a tick whose flush failed makes no read; while the
// instance decides alone it probes once per ProbeInterval, failed probes
// included. Time stands still in the bubble but for the sleeps, so the
// bounds are exact.
func TestBreakerProbeSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const probe = time.Second
		b, f := brFakeBreaker(t, WithProbeInterval(probe), WithThreshold(10))
		var want []string
		check := func(what string, runs ...string) {
			t.Helper()
			want = append(want, runs...)
			if diff := cmp.Diff(want, f.runs()); diff != "" {
				t.Fatalf("%s: scripts run mismatch (-want +got):\n%s", what, diff)
			}
		}
		time.Sleep(probe)
		b.sync()
		check("the first read", "read")
		b.tick()
		check("a tick just after a reply")
		time.Sleep(probe - time.Nanosecond)
		b.tick()
		check("a tick ProbeInterval-1ns after the reply")
		time.Sleep(time.Nanosecond)
		b.tick()
		check("a tick ProbeInterval after the reply", "read")

		time.Sleep(probe)
		fail(b)
		f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
		b.tick()
		check("a tick whose flush fails, ProbeInterval after the last reply", "flush")
		b.tick()
		check("local, ProbeInterval after the last reply", "read")
		b.tick()
		check("local, just after a failed probe")
		time.Sleep(probe - time.Nanosecond)
		b.tick()
		check("local, ProbeInterval-1ns after a failed probe")
		time.Sleep(time.Nanosecond)
		b.tick()
		check("local, ProbeInterval after a failed probe", "read")
	})
}

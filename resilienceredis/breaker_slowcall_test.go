package resilienceredis

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A closed-state call is slow when it took longer than SlowCall, measured
// from its admission: with SlowCall 1ns, a call that took no time is not
// slow, one that took 2ns is, however long ago the instance started. The
// clock is a synctest bubble's; the batch is read from its round trip.
func TestBreakerSlowCallFromAdmission(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", []BreakerOption{WithSlowCall(time.Nanosecond)})
		defer b.Close()
		time.Sleep(time.Hour)
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil) // took no time
		p, err = b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Nanosecond)
		p.Done(nil) // took 2ns
		b.flush()
		c, ok := rdb.last(flushScript)
		if !ok || len(c.args) < 12 {
			t.Fatalf("no batch sent: %v", c)
		}
		if succ, slow := fmt.Sprint(c.args[9]), fmt.Sprint(c.args[11]); succ != "2" || slow != "1" {
			t.Errorf("batch of 2 successes, one taking 0ns, one 2ns (SlowCall 1ns): successes %s slow %s, want 2 and 1", succ, slow)
		}
	})
}

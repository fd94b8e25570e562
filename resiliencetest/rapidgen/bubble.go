package rapidgen

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"
)

// CheckInBubble is rapid.Check for properties that use real time: each run
// of prop (each check, each try while shrinking, each replay of a failure)
// runs in a testing/synctest bubble of its own, so time.Sleep, timers,
// tickers and context deadlines inside it run on the bubble's fake clock. A
// property that sleeps for an hour takes no time, and every run starts at
// the same instant, midnight UTC 2000-01-01. Use it for pipelines built on
// clock.Real() and the time package; for pipelines that take a
// clock.Clock, rapid.Check with a clock.Fake and resiliencetest.Drive works
// as well and needs no bubble. rapid.Check itself cannot run inside
// synctest.Test: rapid asks the test for its deadline, which panics in a
// bubble.
//
// A run fails as under rapid.Check, and the failure is shrunk, reported and
// saved the same way (-rapid.checks, -rapid.seed, -rapid.failfile work as
// usual). A run also fails, with synctest's "deadlock" panic, if goroutines
// it started are still blocked when prop returns, or if every goroutine of
// the bubble is blocked for good. A panic in the bubble is reported with
// where in the bubble it happened.
//
// Inside prop, t's draws, logs and failures work as usual. Two parts of t
// belong to the test outside the bubble: functions given to t.Cleanup run
// after the bubble has ended (use defer instead), and t.Context() is not
// the bubble's: waiting on it directly never lets the bubble's time move,
// and a context derived from it must be cancelled before prop returns (as
// go vet's lostcancel check asks). context.Background() is the simplest
// choice.
//
// CheckInBubble must be called from the goroutine running t, outside any
// bubble; t must not be one that synctest.Test passed in.
func CheckInBubble(t *testing.T, prop func(t *rapid.T)) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		// Made outside the bubble, so that rapid may cancel it outside.
		_ = rt.Context().Done()
		var (
			p        any
			site     uint32
			panicked = true
		)
		synctest.Test(t, func(*testing.T) {
			defer func() {
				if panicked {
					p = recover()
					p, site = fromBubble(p)
				}
			}()
			prop(rt)
			panicked = false
		})
		if panicked {
			repanic(p, site)
		}
	})
}

// fromBubble returns what to raise again outside the bubble for p, a value
// recovered in it, and the site of the panic in the bubble. rapid tells
// failures apart by the stack of the panic it recovers: a failure must not
// shrink into a different one, and running out of data (rapid's own panic,
// from a draw) is not a failure. Raised again outside, every panic would
// have the same stack; so the site picks one of several places to raise it
// from. Values other than rapid's own carry where in the bubble they were
// raised.
func fromBubble(p any) (any, uint32) {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	var where strings.Builder
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "testing.") {
			break
		}
		if !strings.HasPrefix(f.Function, "runtime.") {
			fmt.Fprintf(&where, "    %s:%d in %s\n", f.File, f.Line, f.Function)
		}
		if !more {
			break
		}
	}
	h := fnv.New32a()
	h.Write([]byte(where.String()))
	typ := reflect.TypeOf(p)
	switch {
	case typ != nil && typ.PkgPath() == "pgregory.net/rapid" && typ.Name() == "invalidData":
		return p, invalidSite
	case typ != nil && typ.PkgPath() == "pgregory.net/rapid":
		return p, h.Sum32() % invalidSite
	}
	return &bubblePanic{value: p, where: where.String()}, h.Sum32() % invalidSite
}

// bubblePanic is a panic in a bubble, raised again outside it.
type bubblePanic struct {
	value any
	where string
}

func (p *bubblePanic) Error() string {
	return fmt.Sprintf("%v\nin the synctest bubble, at\n%s", p.value, strings.TrimRight(p.where, "\n"))
}

// invalidSite is repanic's site for rapid's "no more data" panics; the
// sites below it are for failures.
const invalidSite = 8

// repanic raises p from the place site picks, so that rapid sees panics
// from different sites in the bubble as different failures (two failing
// sites share a place 1 time in 8).
func repanic(p any, site uint32) {
	switch site {
	case 0:
		panic(p)
	case 1:
		panic(p)
	case 2:
		panic(p)
	case 3:
		panic(p)
	case 4:
		panic(p)
	case 5:
		panic(p)
	case 6:
		panic(p)
	case 7:
		panic(p)
	default:
		panic(p)
	}
}

package telemetry_test

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/telemetry"
)

// textLogger returns a logger at level writing text lines without their
// time into buf.
func textLogger(buf *bytes.Buffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func lines(buf *bytes.Buffer) []string {
	s := strings.TrimSuffix(buf.String(), "\n")
	buf.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func wantLines(t *testing.T, buf *bytes.Buffer, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, lines(buf)); diff != "" {
		t.Fatalf("log lines mismatch (-want +got):\n%s", diff)
	}
}

func TestSlogLevelsAndAttributes(t *testing.T) {
	var buf bytes.Buffer
	s := telemetry.NewSlog(textLogger(&buf, slog.LevelDebug), &telemetry.SlogOptions{Interval: -1})
	for _, e := range []telemetry.Event{
		{Type: breaker.EventOpened, Name: "db", From: "closed", To: "open", Wait: 30 * time.Second},
		{Type: breaker.EventOpened, Name: "db", From: "closed", To: "open", Wait: math.MaxInt64},
		{Type: breaker.EventHalfOpened, Name: "db", From: "open", To: "half-open"},
		{Type: breaker.EventClosed, Name: "db", From: "half-open", To: "closed"},
		{Type: breaker.EventRefused, Name: "db", Err: errors.New("breaker: open"), Wait: time.Second},
		{Type: retry.EventAttemptFailed, Attempt: 1, Err: errors.New("boom")},
		{Type: retry.EventGaveUp, Name: "get", Attempt: 3, Err: errors.New("retry: attempts used up")},
		{Type: ratelimit.EventRefused, Name: "api", Key: "alice", Elapsed: time.Millisecond},
		{Type: resilience.EventFallbackUsed, Name: "prices"},
		{Type: "custom.thing", Name: "mine"},
	} {
		s.Observe(e)
	}
	wantLines(t, &buf,
		`level=WARN msg=breaker.opened policy=breaker name=db wait=30s from=closed to=open`,
		`level=WARN msg=breaker.opened policy=breaker name=db wait=never from=closed to=open`,
		`level=INFO msg=breaker.half_opened policy=breaker name=db from=open to=half-open`,
		`level=INFO msg=breaker.closed policy=breaker name=db from=half-open to=closed`,
		`level=DEBUG msg=breaker.refused policy=breaker name=db error="breaker: open" wait=1s`,
		`level=DEBUG msg=retry.attempt_failed policy=retry attempt=1 error=boom`,
		`level=WARN msg=retry.gave_up policy=retry name=get attempt=3 error="retry: attempts used up"`,
		`level=DEBUG msg=ratelimit.refused policy=ratelimit name=api key=alice elapsed=1ms`,
		`level=INFO msg=fallback.used policy=fallback name=prices`,
		`level=INFO msg=custom.thing policy=custom name=mine`,
	)
}

func TestSlogLevel(t *testing.T) {
	want := map[slog.Level][]telemetry.Type{
		slog.LevelWarn: {breaker.EventOpened, breaker.EventEvicted, retry.EventGaveUp},
		slog.LevelInfo: {breaker.EventHalfOpened, breaker.EventClosed, timeout.EventAbandoned, resilience.EventFallbackUsed},
	}
	for level, types := range want {
		for _, typ := range types {
			if got := telemetry.Level(typ); got != level {
				t.Errorf("Level(%q) = %v, want %v", typ, got, level)
			}
		}
	}
	for _, types := range allTypes {
		for _, typ := range types {
			if got := telemetry.Level(typ); got != slog.LevelDebug && got != slog.LevelInfo && got != slog.LevelWarn {
				t.Errorf("Level(%q) = %v", typ, got)
			}
		}
	}
	if got := telemetry.Level(breaker.EventRefused); got != slog.LevelDebug {
		t.Errorf("Level(breaker.refused) = %v, want DEBUG", got)
	}
}

func TestSlogRateLimit(t *testing.T) {
	var buf bytes.Buffer
	f := clock.NewFake()
	s := telemetry.NewSlog(textLogger(&buf, slog.LevelDebug), &telemetry.SlogOptions{Clock: f})
	refused := func(name string) {
		s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: name, Wait: time.Second})
	}
	for range 5 {
		refused("db")
	}
	// Another policy, and another event type, have limits of their own.
	refused("cache")
	s.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "db"})
	wantLines(t, &buf,
		`level=DEBUG msg=breaker.refused policy=breaker name=db wait=1s`,
		`level=DEBUG msg=breaker.refused policy=breaker name=cache wait=1s`,
		`level=DEBUG msg=breaker.failure policy=breaker name=db`,
	)
	// Transitions are never left out.
	for range 2 {
		s.Observe(telemetry.Event{Type: breaker.EventClosed, Name: "db", From: "half-open", To: "closed"})
	}
	wantLines(t, &buf,
		`level=INFO msg=breaker.closed policy=breaker name=db from=half-open to=closed`,
		`level=INFO msg=breaker.closed policy=breaker name=db from=half-open to=closed`,
	)
	f.Advance(time.Second - 1)
	refused("db")
	wantLines(t, &buf)
	f.Advance(1)
	refused("db") // a second after the last line: written, with the 5 left out
	refused("db")
	wantLines(t, &buf, `level=DEBUG msg=breaker.refused policy=breaker name=db wait=1s suppressed=5`)
	f.Advance(10 * time.Second)
	refused("db")
	wantLines(t, &buf, `level=DEBUG msg=breaker.refused policy=breaker name=db wait=1s suppressed=1`)
	f.Advance(10 * time.Second)
	refused("db")
	wantLines(t, &buf, `level=DEBUG msg=breaker.refused policy=breaker name=db wait=1s`)
}

func TestSlogBelowLevelWritesNothing(t *testing.T) {
	var buf bytes.Buffer
	f := clock.NewFake()
	s := telemetry.NewSlog(textLogger(&buf, slog.LevelInfo), &telemetry.SlogOptions{Clock: f})
	for range 3 {
		s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db"}) // Debug
	}
	wantLines(t, &buf)
	// Events below the level are not counted as left out either.
	s.Observe(telemetry.Event{Type: retry.EventGaveUp, Name: "db"})
	wantLines(t, &buf, `level=WARN msg=retry.gave_up policy=retry name=db`)
}

func TestNewSlogPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil logger", func() { telemetry.NewSlog(nil, nil) }, "telemetry: NewSlog logger must not be nil"},
		{"interval", func() { telemetry.NewSlog(slog.Default(), &telemetry.SlogOptions{Interval: -2}) },
			"telemetry: SlogOptions.Interval must be >= 0 or Off (-1), got -2ns"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.want)
				}
			}()
			c.f()
		}()
	}
}

// A refusal of a policy's own event type is written at Debug, as the
// built-in refusals; other unknown types at Info.
func TestLevelOfOwnTypes(t *testing.T) {
	for typ, want := range map[telemetry.Type]slog.Level{
		"adaptive.refused": slog.LevelDebug, "mine.refused": slog.LevelDebug,
		"mine.flushed": slog.LevelInfo, bulkhead.EventRefused: slog.LevelDebug,
		"http_server.answered": slog.LevelDebug, "grpc_server.failure": slog.LevelDebug,
		"chaos.fault": slog.LevelInfo,
		// Level reads the part after the dot only.
		"mine.opened": slog.LevelWarn, "mine.gave_up": slog.LevelWarn,
		"cache.evicted": slog.LevelWarn, "mine.closed": slog.LevelInfo,
		"mine.used": slog.LevelInfo, "mine.waited": slog.LevelDebug,
		"mine.call": slog.LevelDebug, "opened": slog.LevelInfo,
		"refused": slog.LevelInfo,
		// A cache's per-call events are Debug; a stale value served is Info.
		"cache.hit": slog.LevelDebug, "cache.miss": slog.LevelDebug,
		"cache.coalesced": slog.LevelDebug, "cache.stale": slog.LevelInfo,
	} {
		if got := telemetry.Level(typ); got != want {
			t.Errorf("Level(%q) = %v, want %v", typ, got, want)
		}
	}
}

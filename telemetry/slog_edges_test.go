package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// recorder is a slog.Handler that keeps the attributes of each record.
type recorder struct {
	mu    sync.Mutex
	attrs [][]slog.Attr
}

func (h *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *recorder) Handle(_ context.Context, r slog.Record) error {
	var as []slog.Attr
	r.Attrs(func(a slog.Attr) bool { as = append(as, a); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attrs = append(h.attrs, as)
	return nil
}
func (h *recorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recorder) WithGroup(string) slog.Handler      { return h }

// A handler of one's own sees exactly the documented attributes, in
// order, and no empty one.
func TestSlogPassesOnlyItsAttributes(t *testing.T) {
	h := &recorder{}
	s := telemetry.NewSlog(slog.New(h), &telemetry.SlogOptions{Interval: -1})
	s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db", Wait: time.Second})
	want := [][]slog.Attr{{slog.String(telemetry.AttrPolicy, "breaker"), slog.String(telemetry.AttrName, "db"), slog.Duration(telemetry.AttrWait, time.Second)}}
	if diff := cmp.Diff(want, h.attrs, cmp.Comparer(func(a, b slog.Attr) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
}

// The rate limit holds for the shortest Interval too: one line per
// nanosecond for each policy name and event type.
func TestSlogIntervalOfOneNanosecond(t *testing.T) {
	var buf bytes.Buffer
	f := clock.NewFake()
	s := telemetry.NewSlog(textLogger(&buf, slog.LevelDebug), &telemetry.SlogOptions{Interval: 1, Clock: f})
	for range 3 {
		s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db"})
	}
	f.Advance(1)
	s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db"})
	wantLines(t, &buf,
		`level=DEBUG msg=breaker.refused policy=breaker name=db`,
		`level=DEBUG msg=breaker.refused policy=breaker name=db suppressed=2`,
	)
}

// With nil options (the real clock, a rate limit of 1s), per-call events
// are written: the default clock is set.
func TestSlogDefaultOptionsWrite(t *testing.T) {
	var buf bytes.Buffer
	s := telemetry.NewSlog(textLogger(&buf, slog.LevelDebug), nil)
	s.Observe(telemetry.Event{Type: breaker.EventRefused, Name: "db"})
	wantLines(t, &buf, `level=DEBUG msg=breaker.refused policy=breaker name=db`)
}

package export

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestBoundFullGroupMarked: once a group is full it is marked so, and its
// values are then read without the lock (the marker is what the lock-free
// read checks).
func TestBoundFullGroupMarked(t *testing.T) {
	var b Bound[int]
	b.Of(1, 1, "a")
	if b.full.Load(1) != nil {
		t.Fatal("group 1 marked full with 1 of 1 values admitted and none refused")
	}
	if got := b.Of(1, 1, "b"); got != Other {
		t.Fatalf("Of(1, 1, b) = %q, want %q", got, Other)
	}
	if b.full.Load(1) == nil {
		t.Error("group 1 not marked full after refusing a value: its later values take the lock")
	}
	if b.full.Load(2) != nil {
		t.Error("group 2 marked full: it has admitted nothing")
	}
}

// TestReasonsAreTheRefusals: the fast path of a refusal's error.type holds
// exactly the knownErrors that are refusals.
func TestReasonsAreTheRefusals(t *testing.T) {
	for _, k := range knownErrors {
		_, in := reasons[k.err]
		if want := errors.Is(k.err, resilience.ErrRefused); in != want {
			t.Errorf("%s in reasons: %v, want %v", k.name, in, want)
		}
		if name, ok := reasons[k.err]; ok && name != k.name {
			t.Errorf("reasons[%v] = %q, want %q", k.err, name, k.name)
		}
	}
}

// TestErrorTypeThroughEveryWrapper: fmt.Errorf with one %w or several and
// errors.Join of one error or several are looked through to the first
// error they wrap.
func TestErrorTypeThroughEveryWrapper(t *testing.T) {
	urlErr := &url.Error{Op: "Get", URL: "http://127.0.0.1", Err: errors.New("refused")}
	other := errors.New("other")
	for _, err := range []error{
		fmt.Errorf("get: %w", urlErr),
		fmt.Errorf("get: %w, %w", urlErr, other),
		errors.Join(urlErr),
		errors.Join(urlErr, other),
	} {
		if got := ErrorType(err); got != "*url.Error" {
			t.Errorf("ErrorType(%T %v) = %q, want %q", err, err, got, "*url.Error")
		}
	}
}

// TestRecordsWaitRejectedAfterAnyWait: a bulkhead.refused event's wait is
// recorded from the first nanosecond spent in the queue.
func TestRecordsWaitRefusedAfterAnyWait(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want bool
	}{{0, false}, {time.Nanosecond, true}} {
		e := telemetry.Event{Type: bulkhead.EventRefused, Wait: c.wait}
		if got := RecordsWait(e); got != c.want {
			t.Errorf("RecordsWait(bulkhead.rejected, Wait %v) = %v, want %v", c.wait, got, c.want)
		}
	}
}

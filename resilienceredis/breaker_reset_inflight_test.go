package resilienceredis

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Reset of this instance while its flush is in flight: the batch,
// counted before the Reset, is never sent again after it, even when the
// reply is of a state the instance would otherwise send it again for (a
// state created again, of another epoch).
func TestBreakerResetDuringFlushDropsBatch(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10))
	b.sync()
	fail(b)
	reset := false
	f.set(func(script string, _ []any) ([]any, error) {
		if script == "flush" && !reset {
			reset = true
			if err := b.Reset(context.Background()); err != nil {
				t.Error(err)
			}
		}
		return brReply(9, 1, 0, 0, 0), nil // the state created again, of epoch 9; the batch fenced
	})
	b.flush()
	if diff := cmp.Diff([]string{"read", "flush", "reset"}, f.runs()); diff != "" {
		t.Errorf("scripts run mismatch (-want +got):\n%s", diff)
	}
}

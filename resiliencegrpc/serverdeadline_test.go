package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/google/go-cmp/cmp"
)

// The handler runs under the context the policy gives it: a timeout's
// deadline reaches a unary handler's context and a stream handler's
// stream.Context().
func TestServerHandlerSeesThePolicysDeadline(t *testing.T) {
	forEachServerKind(t, func(t *testing.T, k serverKind) {
		start := time.Now()
		var deadline time.Time
		var has bool
		_, err := k.call(timeout.New[struct{}](3*time.Second), context.Background(), func(ctx context.Context) (any, error) {
			deadline, has = ctx.Deadline()
			return nil, nil
		})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		if diff := cmp.Diff([]any{true, 3 * time.Second}, []any{has, deadline.Sub(start)}); diff != "" {
			t.Errorf("handler's deadline, its distance from the call's start mismatch (-want +got):\n%s", diff)
		}
	})
}

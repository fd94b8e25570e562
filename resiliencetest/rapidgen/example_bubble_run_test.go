package rapidgen_test

import "testing"

// TestRetryOnTheRealClock runs ExampleCheckInBubble's property.
func TestRetryOnTheRealClock(t *testing.T) { retryOnTheRealClock(t) }

package hedge_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// bound is how long a test waits for what should happen at once (a call's
// return once its attempts are done or cancelled), before it fails: a
// bound for failure only, never a measure of speed.
const bound = 2 * time.Second

// bubbleBound bounds a synctest bubble in real time: far beyond what its
// fake-time work takes, and within go test's patience for a hung mutant.
const bubbleBound = 10 * time.Second

// bubbleWithin runs f in a synctest bubble, as synctest.Test does, and
// fails with a panic if the bubble has not ended within bubbleBound of
// real time: a call that starts attempts for ever keeps the bubble's fake
// time moving, so synctest never sees it blocked and would wait for good.
func bubbleWithin(t *testing.T, f func(*testing.T)) {
	t.Helper()
	name := t.Name()
	timer := time.AfterFunc(bubbleBound, func() {
		panic(fmt.Sprintf("%s: the synctest bubble still runs after %v of real time", name, bubbleBound))
	})
	defer timer.Stop()
	synctest.Test(t, f)
}

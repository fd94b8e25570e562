package testwait

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The watchdog's panic, seen in this process: it names the test and says
// what it waited for. (TestWatchdog runs the real panic in a child.)
func TestWatchdogPanicsWithItsMessage(t *testing.T) {
	got := make(chan any, 1)
	orig := expire
	expire = func(msg string) {
		defer func() { got <- recover() }()
		orig(msg)
	}
	defer func() { expire = orig }()
	synctest.Test(t, func(*testing.T) {
		stop := Watchdog("TestChild")
		defer stop()
		time.Sleep(BubblePatience + time.Second)
	})
	select {
	case r := <-got:
		msg, _ := r.(string)
		if want := "TestChild: still running after 1m0s: a call never returned"; !strings.HasPrefix(msg, want) {
			t.Fatalf("the watchdog panicked with %v, want a message starting %q", r, want)
		}
	default:
		t.Fatal("the watchdog did not fire after BubblePatience")
	}
}

package clock

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
)

// goid reads every digit of the id, 0 and 9 included, and stops at the
// first byte after it: goroutines with ids 10 and 1, or 19 and 1, are
// told apart. Goroutine ids grow, so goroutines are started one after
// the other until one id has a 0 after its first digit and one has a 9;
// each id goid reads is checked against its stack trace header, read
// with strconv.
func TestGoidReadsTheWholeID(t *testing.T) {
	type reading struct {
		got    uint64
		header []byte
	}
	sawZero, sawNine := false, false
	for i := 0; i < 10000 && !(sawZero && sawNine); i++ {
		ch := make(chan reading)
		go func() {
			var buf [64]byte
			got := goid(&buf)
			header := make([]byte, 64)
			ch <- reading{got, header[:runtime.Stack(header, false)]}
		}()
		r := <-ch
		rest, ok := bytes.CutPrefix(r.header, []byte("goroutine "))
		end := bytes.IndexByte(rest, ' ')
		if !ok || end < 0 {
			t.Fatalf("stack trace header %q", r.header)
		}
		digits := string(rest[:end])
		want, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			t.Fatalf("stack trace header %q: %v", r.header, err)
		}
		if r.got != want {
			t.Fatalf("goid() = %d on goroutine %d", r.got, want)
		}
		sawZero = sawZero || bytes.IndexByte([]byte(digits[1:]), '0') >= 0
		sawNine = sawNine || bytes.IndexByte([]byte(digits), '9') >= 0
	}
	if !sawZero || !sawNine {
		t.Fatalf("saw an id with a 0 after its first digit: %v, with a 9: %v; want both", sawZero, sawNine)
	}
}

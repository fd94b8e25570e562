package hedge

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A failed call keeps the errors of its first keep attempts and of its
// last keep to start, in start order, whatever the number of attempts:
// all of them when there are at most 2 × keep. The selection runs under a
// bound, for failure only: a loop over the attempts that never ends fails
// instead of hanging (with a panic, as selectWithin's).
func TestKeptErrors(t *testing.T) {
	for n := 0; n <= 3*keep; n++ {
		var f failures
		errs := make([]error, n)
		for i := range errs {
			errs[i] = errors.New("attempt " + strconv.Itoa(i))
			f.add(i, errs[i])
		}
		done := make(chan []error, 1)
		go func() { done <- f.kept(n) }()
		var got []error
		select {
		case got = <-done:
		case <-time.After(2 * time.Second):
			panic(fmt.Sprintf("%s: kept(%d) did not return within 2s", t.Name(), n))
		}
		want := errs
		if n > 2*keep {
			want = append(errs[:keep:keep], errs[n-keep:]...)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("kept(%d): mismatch (-want +got):\n%s", n, diff)
		}
	}
}

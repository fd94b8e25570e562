package merge_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/merge"
)

type config struct {
	N     int
	D     time.Duration
	Name  string
	Flag  bool
	Ratio float64
	Hook  func()
}

func TestNonZero(t *testing.T) {
	hook := func() {}
	dst := config{N: 5, D: time.Second, Name: "kept", Ratio: 0.5}
	merge.NonZero(&dst, config{N: -1, Flag: true, Hook: hook})
	if dst.Hook == nil {
		t.Fatal("a non-nil func was not set")
	}
	dst.Hook = nil
	want := config{N: -1, D: time.Second, Name: "kept", Flag: true, Ratio: 0.5}
	if diff := cmp.Diff(want, dst, cmp.Comparer(func(a, b func()) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("NonZero mismatch (-want +got):\n%s", diff)
	}
	merge.NonZero(&dst, config{})
	if diff := cmp.Diff(want, dst, cmp.Comparer(func(a, b func()) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("NonZero of a zero config changed dst (-want +got):\n%s", diff)
	}
}

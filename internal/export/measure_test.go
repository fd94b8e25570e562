package export

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

type record struct {
	Layer   string
	Attempt int
	Outcome string
	D       time.Duration
	Err     error
}

type recorder struct {
	mu   sync.Mutex
	recs []record
}

func (r *recorder) Call(_ context.Context, outcome string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, record{"call", 0, outcome, d, err})
}

func (r *recorder) Attempt(_ context.Context, n int, outcome string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, record{"attempt", n, outcome, d, err})
}

// TestMeasure: the Call layer reports each call's outcome and duration on
// the clock; the Attempt layer inside it numbers the call's attempts from
// 1, bounded by attempts; without a Call layer an attempt is number 0.
func TestMeasure(t *testing.T) {
	clk := clock.NewFake()
	var r recorder
	call, attempt := Measure[int](clk, "x", 2, &r)
	if call.String() != "measure(x)" || attempt.String() != "measure-attempt(x)" {
		t.Errorf("names %q, %q", call.String(), attempt.String())
	}
	boom := errors.New("boom")
	tries := 0
	inner := resilience.New("thrice", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		var v int
		var err error
		for range 3 {
			tries++
			v, err = next.Call(ctx)
		}
		return v, err
	})
	p := resilience.Then(call, inner, attempt)
	_, err := p.Do(context.Background(), func(context.Context) (int, error) {
		clk.Advance(time.Second)
		if tries == 3 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if _, err := attempt.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	want := []record{
		{"attempt", 1, OutcomeSuccess, time.Second, nil},
		{"attempt", 2, OutcomeSuccess, time.Second, nil},
		{"attempt", 2, OutcomeFailure, time.Second, boom},
		{"call", 0, OutcomeFailure, 3 * time.Second, boom},
		{"attempt", 0, OutcomeSuccess, 0, nil},
	}
	if diff := cmp.Diff(want, r.recs, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("records mismatch (-want +got):\n%s", diff)
	}
}

// TestMeasureNested: each Measure's Attempt layer counts the attempts of
// its own Call layer.
func TestMeasureNested(t *testing.T) {
	clk := clock.NewFake()
	var outer, inner recorder
	oc, oa := Measure[int](clk, "outer", 5, &outer)
	ic, ia := Measure[int](clk, "inner", 5, &inner)
	twice := resilience.New("twice", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		next.Call(ctx)
		return next.Call(ctx)
	})
	p := resilience.Then(oc, twice, oa, ic, ia)
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range outer.recs {
		if r.Layer == "attempt" {
			got = append(got, r.Attempt)
		}
	}
	for _, r := range inner.recs {
		if r.Layer == "attempt" {
			got = append(got, -r.Attempt)
		}
	}
	if diff := cmp.Diff([]int{1, 2, -1, -1}, got); diff != "" {
		t.Errorf("attempt numbers (outer, then inner negated) mismatch (-want +got):\n%s", diff)
	}
}

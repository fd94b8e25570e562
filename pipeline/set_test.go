package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
)

// loadDoc is the document of TestReloadUnderLoad, with the settings that
// reloads change.
func loadDoc(workThreshold, downThreshold int, rate float64, burst, limit int) []byte {
	return fmt.Appendf(nil, `{
		"guards": {
			"work-breaker": {"kind": "breaker", "config": {"Threshold": %d, "Cooldown": "1m"}},
			"down-breaker": {"kind": "breaker", "config": {"Threshold": %d, "Cooldown": "1m"}},
			"lim": {"kind": "ratelimit", "config": {"Rate": %v, "Burst": %d}},
			"bh": {"kind": "bulkhead", "config": {"MaxConcurrent": %d}}
		},
		"pipelines": {
			"work": [{"guard": "lim"}, {"guard": "bh"}, {"guard": "work-breaker"}],
			"down": [{"guard": "down-breaker"}]
		}}`, workThreshold, downThreshold, rate, burst, limit)
}

func mustApply(t *testing.T, s *pipeline.Set[int], doc []byte) pipeline.Reload {
	t.Helper()
	r, err := s.ApplyJSON(doc)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return r
}

func TestReloadUnderLoad(t *testing.T) {
	clk := clock.NewFake() // never advanced: no refill, no cooldown ends
	s := pipeline.NewSet[int](pipeline.WithClock(clk))
	const burst = 1000
	mustApply(t, s, loadDoc(3, 2, 1, burst, 4))
	lim := s.Guard("lim").(*ratelimit.Limiter)
	bh := s.Guard("bh").(*bulkhead.Bulkhead)
	down := s.Guard("down-breaker").(*breaker.Breaker)
	work, err := s.Policy("work")
	if err != nil {
		t.Fatal(err)
	}
	downP, err := s.Policy("down")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Open the down breaker: two failures in a row.
	for range 2 {
		downP.Do(ctx, func(context.Context) (int, error) { return 0, errors.New("down") })
	}
	if down.State() != breaker.Open {
		t.Fatalf("down-breaker = %v before the reloads, want open", down.State())
	}

	// Hold 3 of the bulkhead's 4 slots across the reloads.
	const held = 3
	release := make(chan struct{})
	var holding, heldDone sync.WaitGroup
	holding.Add(held)
	heldDone.Add(held)
	for range held {
		go func() {
			defer heldDone.Done()
			_, err := work.Do(ctx, func(context.Context) (int, error) {
				holding.Done()
				<-release
				return 1, nil
			})
			if err != nil {
				t.Errorf("held call: %v", err)
			}
		}()
	}
	holding.Wait()

	// The load: calls through the set's layer while reloads retune every guard.
	const workers, calls = 4, 50
	var depCalls, ok, full atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range calls {
				_, err := work.Do(ctx, func(context.Context) (int, error) {
					depCalls.Add(1)
					return 1, nil
				})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, bulkhead.ErrFull):
					full.Add(1)
				default:
					t.Errorf("call through work: %v", err)
				}
			}
		}()
	}
	reloads := [][]byte{
		loadDoc(5, 4, 2, 2*burst, 8),
		loadDoc(4, 3, 3, 3*burst, 6),
		loadDoc(6, 5, 4, 4*burst, 10),
	}
	close(start)
	var last pipeline.Reload
	for _, doc := range reloads {
		last = mustApply(t, s, doc)
	}
	wg.Wait()

	// No call lost or counted twice.
	if got, want := ok.Load()+full.Load(), int64(workers*calls); got != want {
		t.Errorf("outcomes = %d (%d ok, %d refused), want %d calls", got, ok.Load(), full.Load(), want)
	}
	if got, want := depCalls.Load(), ok.Load(); got != want {
		t.Errorf("calls at the dependency = %d, want the %d successes", got, want)
	}
	// Every guard kept, with the last settings.
	if s.Guard("lim") != lim || s.Guard("bh") != bh || s.Guard("down-breaker") != down {
		t.Fatal("a reload replaced a guard whose name and kind it kept")
	}
	if got := bh.InFlight(); got != held {
		t.Errorf("bulkhead in flight after the reloads = %d, want the %d held calls", got, held)
	}
	if got := bh.Limit(); got != 10 {
		t.Errorf("bulkhead limit = %d, want 10", got)
	}
	if lim.Rate() != 4 || lim.Burst() != 4*burst {
		t.Errorf("limiter rate, burst = %v, %d, want 4, %d", lim.Rate(), lim.Burst(), 4*burst)
	}
	// The clock stood still: the tokens are the first burst less every call
	// that passed the limiter (a new limiter would be full, at 4000).
	took := ok.Load() + full.Load() + held
	if got, want := lim.Tokens(), float64(burst-took); math.Abs(got-want) > 1 {
		t.Errorf("limiter tokens = %v, want %v (burst %d less %d calls)", got, want, burst, took)
	}
	// The open breaker is still open, and its threshold changed live.
	if down.State() != breaker.Open {
		t.Errorf("down-breaker after the reloads = %v, want still open", down.State())
	}
	if _, err := downP.Do(ctx, func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("call through down after the reloads = %v, want ErrOpen", err)
	}
	want := []pipeline.Change{
		{Path: "guards.bh", Action: pipeline.Retuned, Fields: []string{"MaxConcurrent"}},
		{Path: "guards.down-breaker", Action: pipeline.Retuned, Fields: []string{"Threshold"}},
		{Path: "guards.lim", Action: pipeline.Retuned, Fields: []string{"Burst", "Rate"}},
		{Path: "guards.work-breaker", Action: pipeline.Retuned, Fields: []string{"Threshold"}},
	}
	if diff := cmp.Diff(want, last.Changes); diff != "" {
		t.Errorf("last reload's changes mismatch (-want +got):\n%s", diff)
	}
	if last.Version != 4 {
		t.Errorf("last reload's version = %d, want 4", last.Version)
	}
	close(release)
	heldDone.Wait()
	if got := bh.InFlight(); got != 0 {
		t.Errorf("bulkhead in flight after the held calls = %d, want 0", got)
	}
}

func TestReloadTakesThresholdLive(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, loadDoc(5, 5, 1, 10, 4))
	b := s.Guard("work-breaker").(*breaker.Breaker)
	for range 2 {
		b.Record(true)
	}
	mustApply(t, s, loadDoc(3, 5, 1, 10, 4))
	b.Record(true) // the third failure in a row: trips under the new threshold
	if b.State() != breaker.Open {
		t.Errorf("breaker after 3 failures with the threshold reloaded to 3 = %v, want open", b.State())
	}
}

func TestInvalidDocumentChangesNothing(t *testing.T) {
	clk := clock.NewFake()
	s := pipeline.NewSet[int](pipeline.WithClock(clk))
	mustApply(t, s, loadDoc(3, 2, 1, 10, 4))
	lim := s.Guard("lim").(*ratelimit.Limiter)
	bh := s.Guard("bh").(*bulkhead.Bulkhead)
	b := s.Guard("work-breaker").(*breaker.Breaker)
	work, _ := s.Current("work")
	before := work.String()

	for _, tc := range []struct {
		doc, path string
		err       error
	}{
		// Valid live changes of every guard, and a bad layer after them.
		{`{"guards": {
			"work-breaker": {"kind": "breaker", "config": {"Threshold": 9, "Cooldown": "1m"}},
			"down-breaker": {"kind": "breaker", "config": {"Threshold": 9, "Cooldown": "1m"}},
			"lim": {"kind": "ratelimit", "config": {"Rate": 7, "Burst": 70}},
			"bh": {"kind": "bulkhead", "config": {"MaxConcurrent": 9}}},
		  "pipelines": {"work": [{"guard": "lim"}, {"kind": "timeout", "config": {"Duration": "0s"}}]}}`,
			"pipelines.work[1].config.Duration", nil},
		// A setting that cannot change live.
		{`{"guards": {
			"work-breaker": {"kind": "breaker", "config": {"Threshold": 9, "Cooldown": "2m"}},
			"lim": {"kind": "ratelimit", "config": {"Rate": 7, "Burst": 70}},
			"bh": {"kind": "bulkhead", "config": {"MaxConcurrent": 9}}},
		  "pipelines": {"work": [{"guard": "lim"}]}}`,
			"guards.work-breaker.config.Cooldown", pipeline.ErrNotLive},
		{`{"guards": {
			"lim": {"kind": "ratelimit", "config": {"Rate": 7, "Burst": 70, "MaxWait": "1s"}},
			"bh": {"kind": "bulkhead", "config": {"MaxConcurrent": 9}}}}`,
			"guards.lim.config.MaxWait", pipeline.ErrNotLive},
	} {
		_, err := s.ApplyJSON([]byte(tc.doc))
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Path != tc.path || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("Apply = %v, want an error at %s matching %v", err, tc.path, tc.err)
		}
	}
	if got := s.Version(); got != 1 {
		t.Errorf("Version = %d after rejected documents, want 1", got)
	}
	if s.Guard("lim") != lim || s.Guard("bh") != bh || s.Guard("work-breaker") != b {
		t.Error("a rejected document replaced a guard")
	}
	if lim.Rate() != 1 || lim.Burst() != 10 || bh.Limit() != 4 {
		t.Errorf("rate, burst, limit = %v, %d, %d after rejected documents, want 1, 10, 4", lim.Rate(), lim.Burst(), bh.Limit())
	}
	// Threshold still 3: three failures trip it, two do not.
	for range 2 {
		b.Record(true)
	}
	if b.State() != breaker.Closed {
		t.Fatalf("work-breaker = %v after 2 failures, want closed", b.State())
	}
	b.Record(true)
	if b.State() != breaker.Open {
		t.Errorf("work-breaker = %v after 3 failures, want open: its threshold is still 3", b.State())
	}
	if p, _ := s.Current("work"); p.String() != before {
		t.Errorf("work = %q after rejected documents, want %q", p.String(), before)
	}
}

func TestCallInFlightFinishesOnItsVersion(t *testing.T) {
	var mu sync.Mutex
	var log []string
	s := pipeline.NewSet[int](tagKind(func(tag string) { mu.Lock(); log = append(log, tag); mu.Unlock() }))
	mustApply(t, s, []byte(`{"pipelines": {"p": [{"kind": "tag", "config": "v1"}]}}`))
	p, err := s.Policy("p")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := p.Do(context.Background(), func(context.Context) (int, error) {
			close(entered)
			<-release
			return 1, nil
		})
		done <- err
	}()
	<-entered
	r := mustApply(t, s, []byte(`{"pipelines": {"p": [{"kind": "tag", "config": "v2"}]}}`))
	if diff := cmp.Diff([]pipeline.Change{{Path: "pipelines.p", Action: pipeline.Changed}}, r.Changes); diff != "" {
		t.Errorf("changes mismatch (-want +got):\n%s", diff)
	}
	p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v2", "v1"}, log); diff != "" {
		t.Errorf("versions run mismatch (-want +got):\n%s", diff)
	}
}

func TestReloadChanges(t *testing.T) {
	var seen []pipeline.Reload
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()), pipeline.WithOnReload(func(r pipeline.Reload) { seen = append(seen, r) }))
	first := mustApply(t, s, []byte(`{
		"guards": {"a": {"kind": "breaker"}, "b": {"kind": "bulkhead", "config": {"MaxConcurrent": 2}}},
		"pipelines": {"p": [{"guard": "a"}], "q": [{"guard": "b"}]}}`))
	oldB := s.Guard("b")
	// Same meaning, other spelling: no change.
	same := mustApply(t, s, []byte(`{"pipelines": {"q": [{"guard": "b"}], "p": [{"guard": "a"}]},
		"guards": {"b": {"config": {"maxconcurrent": 2}, "kind": "bulkhead"}, "a": {"kind": "breaker", "config": null}}}`))
	last := mustApply(t, s, []byte(`{
		"guards": {"b": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}}, "c": {"kind": "breaker"}},
		"pipelines": {"q": [{"guard": "b"}, {"guard": "c"}], "r": []}}`))
	want := []pipeline.Reload{
		{Version: 1, Changes: []pipeline.Change{
			{Path: "guards.a", Action: pipeline.Added},
			{Path: "guards.b", Action: pipeline.Added},
			{Path: "pipelines.p", Action: pipeline.Added},
			{Path: "pipelines.q", Action: pipeline.Added},
		}},
		{Version: 2},
		{Version: 3, Changes: []pipeline.Change{
			{Path: "guards.b", Action: pipeline.Replaced, Fields: []string{"Burst", "MaxConcurrent", "Rate"}},
			{Path: "guards.c", Action: pipeline.Added},
			{Path: "guards.a", Action: pipeline.Removed},
			{Path: "pipelines.q", Action: pipeline.Changed},
			{Path: "pipelines.r", Action: pipeline.Added},
			{Path: "pipelines.p", Action: pipeline.Removed},
		}},
	}
	if diff := cmp.Diff(want, []pipeline.Reload{first, same, last}); diff != "" {
		t.Errorf("reloads mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("reloads seen by WithOnReload mismatch (-want +got):\n%s", diff)
	}
	if _, ok := s.Guard("b").(*ratelimit.Limiter); !ok || s.Guard("b") == oldB {
		t.Errorf("guard b = %T, want a new *ratelimit.Limiter", s.Guard("b"))
	}
}

func TestRemovedPipelineRefuses(t *testing.T) {
	s := pipeline.NewSet[int]()
	if _, err := s.Policy("p"); !errors.Is(err, pipeline.ErrNoPipeline) {
		t.Errorf("Policy before any Apply = %v, want ErrNoPipeline", err)
	}
	mustApply(t, s, []byte(`{"pipelines": {"p": []}}`))
	p, err := s.Policy("p")
	if err != nil {
		t.Fatal(err)
	}
	op := func(context.Context) (int, error) { return 7, nil }
	if v, err := p.Do(context.Background(), op); v != 7 || err != nil {
		t.Fatalf("Do = %v, %v, want 7, nil", v, err)
	}
	mustApply(t, s, []byte(`{"pipelines": {"q": []}}`))
	if _, err := p.Do(context.Background(), op); !errors.Is(err, pipeline.ErrNoPipeline) {
		t.Errorf("Do after p was removed = %v, want ErrNoPipeline", err)
	}
}

func TestConcurrentApplies(t *testing.T) {
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
	mustApply(t, s, loadDoc(3, 2, 1, 10, 4))
	lim := s.Guard("lim").(*ratelimit.Limiter)
	const appliers, applies = 2, 10
	var wg sync.WaitGroup
	for i := range appliers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range applies {
				if _, err := s.ApplyJSON(loadDoc(3+j, 2, float64(1+i), 10+j, 4+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, want := s.Version(), uint64(1+appliers*applies); got != want {
		t.Errorf("Version = %d, want %d", got, want)
	}
	if s.Guard("lim") != lim {
		t.Error("concurrent reloads replaced the limiter")
	}
}

// A reload that removes a guard, or replaces it by one of another kind
// under its name, takes it out of the registry: the registry lists the
// guards of the current document, and a guard of the old name made later
// registers.
func TestReloadUnregistersRemovedGuards(t *testing.T) {
	r := telemetry.NewRegistry()
	s := pipeline.NewSet[int](pipeline.WithRegistry(r))
	registered := func() []string {
		var got []string
		for _, g := range r.Snapshots() {
			got = append(got, string(g.Kind)+" "+g.Name)
		}
		return got
	}
	mustApply(t, s, []byte(`{"guards": {"a": {"kind": "breaker"}, "b": {"kind": "bulkhead", "config": {"MaxConcurrent": 2}}}}`))
	if diff := cmp.Diff([]string{"breaker a", "bulkhead b"}, registered()); diff != "" {
		t.Fatalf("first document: registered mismatch (-want +got):\n%s", diff)
	}
	rl := mustApply(t, s, []byte(`{"guards": {"a": {"kind": "breaker"}}}`))
	if diff := cmp.Diff([]string{"breaker a"}, registered()); diff != "" {
		t.Errorf("b removed: registered mismatch (-want +got):\n%s", diff)
	}
	rl = mustApply(t, s, []byte(`{"guards": {"a": {"kind": "breaker"}, "b": {"kind": "bulkhead", "config": {"MaxConcurrent": 3}}}}`))
	if len(rl.Errors) != 0 {
		t.Errorf("b added again: registration errors %v", rl.Errors)
	}
	if diff := cmp.Diff([]string{"breaker a", "bulkhead b"}, registered()); diff != "" {
		t.Errorf("b added again: registered mismatch (-want +got):\n%s", diff)
	}
	mustApply(t, s, []byte(`{"guards": {"a": {"kind": "bulkhead", "config": {"MaxConcurrent": 1}}, "b": {"kind": "bulkhead", "config": {"MaxConcurrent": 3}}}}`))
	if diff := cmp.Diff([]string{"bulkhead a", "bulkhead b"}, registered()); diff != "" {
		t.Errorf("a replaced by a bulkhead: registered mismatch (-want +got):\n%s", diff)
	}
}

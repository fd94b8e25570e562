package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

func ExampleBuild() {
	doc, err := pipeline.Parse([]byte(`{
		"guards": {
			"pricing-breaker": {"kind": "breaker", "config": {"Threshold": 5, "Cooldown": "10s"}}
		},
		"pipelines": {
			"pricing": [
				{"kind": "retry", "config": {"Attempts": 3, "Backoff": {"Kind": "exponential", "Base": "50ms", "Multiplier": 2, "Max": "1s", "Jitter": "full"}}},
				{"guard": "pricing-breaker"},
				{"kind": "timeout", "config": {"Duration": "200ms"}}
			],
			"quotes": [{"guard": "pricing-breaker"}]
		}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ps, err := pipeline.Build[string](doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ps.Policies["pricing"])
	fmt.Println(ps.Policies["quotes"])
	v, err := ps.Policies["pricing"].Do(context.Background(), func(context.Context) (string, error) { return "42.00", nil })
	fmt.Println(v, err)
	fmt.Println(ps.Guards["pricing-breaker"].(*breaker.Breaker).State())
	// Output:
	// retry > breaker(pricing-breaker) > timeout(200ms)
	// breaker(pricing-breaker)
	// 42.00 <nil>
	// closed
}

func ExampleParse_error() {
	_, err := pipeline.Parse([]byte(`{"pipelines": {"pricing": [{"kind": "retry", "confg": {}}]}}`))
	fmt.Println(err)
	var pe *pipeline.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Path)
	}
	// Output:
	// pipelines.pricing[0].confg: pipeline: unknown field (the keys are kind, config, guard)
	// pipelines.pricing[0].confg
}

func ExampleSet_Apply() {
	s := pipeline.NewSet[string]()
	if _, err := s.ApplyJSON([]byte(`{
		"guards": {"api-limit": {"kind": "ratelimit", "config": {"Rate": 10, "Burst": 5}}},
		"pipelines": {"api": [{"guard": "api-limit"}]}}`)); err != nil {
		fmt.Println(err)
		return
	}
	api, _ := s.Policy("api") // follows reloads
	lim := s.Guard("api-limit").(*ratelimit.Limiter)
	for range 3 {
		api.Do(context.Background(), func(context.Context) (string, error) { return "ok", nil })
	}

	// A live change: the limiter keeps its tokens, takes the new rate.
	r, err := s.ApplyJSON([]byte(`{
		"guards": {"api-limit": {"kind": "ratelimit", "config": {"Rate": 50, "Burst": 5}}},
		"pipelines": {"api": [{"guard": "api-limit"}]}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	fmt.Println(s.Guard("api-limit") == lim, lim.Rate(), lim.Tokens() < 5)

	// A change that would lose the limiter's state is rejected whole.
	_, err = s.ApplyJSON([]byte(`{
		"guards": {"api-limit": {"kind": "ratelimit", "config": {"Rate": 50, "Burst": 5, "MaxWait": "1s"}}},
		"pipelines": {"api": [{"guard": "api-limit"}]}}`))
	fmt.Println(err)
	fmt.Println(s.Version())
	// Output:
	// version 2
	// retuned guards.api-limit (Rate)
	// true 50 true
	// guards.api-limit.config.MaxWait: pipeline: the setting cannot change while the guard runs: ratelimit MaxWait (only Burst and Rate can; rename the guard to replace it, losing its state)
	// 2
}

// watch reloads s from the file at path at each tick whose os.Stat shows
// a new modification time or size, until ticks is closed or ctx is done.
// A document that fails to read or apply is reported and skipped: the set
// keeps running the last good one.
func watch(ctx context.Context, s *pipeline.Set[string], path string, ticks <-chan time.Time, report func(string)) {
	var mod time.Time
	var size int64 = -1
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ticks:
			if !ok {
				return
			}
		}
		fi, err := os.Stat(path)
		if err != nil {
			report(err.Error())
			continue
		}
		if fi.ModTime().Equal(mod) && fi.Size() == size {
			continue
		}
		mod, size = fi.ModTime(), fi.Size()
		data, err := os.ReadFile(path)
		if err != nil {
			report(err.Error())
			continue
		}
		r, err := s.ApplyJSON(data)
		if err != nil {
			report("rejected: " + err.Error())
			continue
		}
		report(r.String())
	}
}

// Example_watch reloads a set from a file that changes. In a program the
// ticks come from a time.Ticker (time.NewTicker(5 * time.Second).C); here
// the example sends them itself, after each change of the file, and waits
// for the watcher's report, so that it runs without waiting on the clock.
func Example_watch() {
	dir, err := os.MkdirTemp("", "pipeline")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pipelines.json")

	s := pipeline.NewSet[string]()
	ticks := make(chan time.Time)
	reports := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watch(context.Background(), s, path, ticks, func(msg string) { reports <- msg })
	}()
	for _, doc := range []string{
		`{"guards": {"db": {"kind": "bulkhead", "config": {"MaxConcurrent": 10}}}, "pipelines": {"db": [{"guard": "db"}]}}`,
		`{"guards": {"db": {"kind": "bulkhead", "config": {"MaxConcurrent": 20}}}, "pipelines": {"db": [{"guard": "db"}]}}`,
		`{"guards": {"db": {"kind": "bulkhead", "config": {"MaxConcurrent": 0}}}, "pipelines": {"db": [{"guard": "db"}]}}`,
	} {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			fmt.Println(err)
			return
		}
		ticks <- time.Now()    // the next tick after the change
		fmt.Println(<-reports) // wait for the reload before the next change
	}
	close(ticks)
	<-done
	fmt.Println("running version", s.Version())
	// Output:
	// version 1
	// added guards.db
	// added pipelines.db
	// version 2
	// retuned guards.db (MaxConcurrent)
	// rejected: guards.db.config.MaxConcurrent: bulkhead: MaxConcurrent must be set (1 to 2147483647): a guard from a document has no New argument to default to
	// running version 2
}

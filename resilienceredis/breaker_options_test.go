package resilienceredis

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// Each option of NewBreaker sets its field of the breaker's configuration
// ("WithX sets [BreakerConfig.X]"), the shared ones (WithPrefix,
// WithTimeout, WithProbeInterval, WithObserver) as for limiters and retry
// budgets and the batch ones (WithFlushInterval) as for retry budgets;
// the configuration given with WithBreakerConfig is the same breaker.
func TestBreakerOptions(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{})
	rdb.Close()
	var rec eventlog.Recorder
	ignore := func(error) breaker.Outcome { return breaker.Ignored }
	want := BreakerConfig{Name: "opts", Prefix: "p:", Threshold: 7, FailureRatio: 0.5, SlowCallRatio: 0.25,
		SlowCall: time.Second, WindowDuration: 20 * time.Second, WindowBuckets: 5, MinCalls: 3,
		Cooldown: time.Minute, TrialTimeout: 2 * time.Minute, MaxTrials: 2, SuccessThreshold: 3,
		Timeout: time.Second, FlushInterval: 20 * time.Millisecond, MaxBatch: 7, ProbeInterval: 2 * time.Second}
	b := newBreaker(rdb, "opts", []BreakerOption{
		WithPrefix("p:"), WithThreshold(7), WithFailureRatio(0.5), WithSlowCallRatio(0.25), WithSlowCall(time.Second),
		WithWindowDuration(20 * time.Second), WithWindowBuckets(5), WithMinCalls(3), WithCooldown(time.Minute),
		WithTrialTimeout(2 * time.Minute), WithMaxTrials(2), WithSuccessThreshold(3), WithClassify(ignore),
		WithObserver(&rec), WithTimeout(time.Second), WithFlushInterval(20 * time.Millisecond), WithMaxBatch(7),
		WithProbeInterval(2 * time.Second), WithOnStateChange(func(breaker.Transition) {}), WithOnRulesMismatch(func(error) {}),
	})
	defer b.Close()
	got := b.cfg
	if got.Observer != telemetry.Observer(&rec) {
		t.Errorf("Observer = %v, want the recorder", got.Observer)
	}
	if got.Classify == nil || got.Classify(errors.New("x")) != breaker.Ignored {
		t.Error("Classify is not the one WithClassify gave (it classifies a plain error as Ignored)")
	}
	if got.OnStateChange == nil || got.OnRulesMismatch == nil {
		t.Error("OnStateChange or OnRulesMismatch is nil, want the ones the options gave")
	}
	got.Observer, got.Classify, got.OnStateChange, got.OnRulesMismatch = nil, nil, nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration mismatch (-want +got):\n%s", diff)
	}
	viaConfig := newBreaker(rdb, "opts", []BreakerOption{WithBreakerConfig(want)})
	defer viaConfig.Close()
	if viaConfig.rules != b.rules {
		t.Errorf("rules through the options %q, through WithBreakerConfig %q; want the same", b.rules, viaConfig.rules)
	}
}

package pipeline_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
)

// The error of a reload that changes a setting a running guard cannot
// take names the first such setting in its path, lists them all, and says
// which settings of the kind can change.
func TestNotLiveSaysWhichSettingsCan(t *testing.T) {
	for _, tc := range []struct{ before, after, want string }{
		{`{"guards": {"g": {"kind": "breaker", "config": {"Cooldown": "1m"}}}}`,
			`{"guards": {"g": {"kind": "breaker", "config": {"Cooldown": "2m", "MinCalls": 3}}}}`,
			"guards.g.config.Cooldown: pipeline: the setting cannot change while the guard runs: breaker Cooldown, MinCalls (only Threshold can; rename the guard to replace it, losing its state)"},
		{`{"guards": {"g": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1}}}}`,
			`{"guards": {"g": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1, "MaxWait": "1s"}}}}`,
			"guards.g.config.MaxWait: pipeline: the setting cannot change while the guard runs: ratelimit MaxWait (only Burst and Rate can; rename the guard to replace it, losing its state)"},
		{`{"guards": {"g": {"kind": "adaptive"}}}`,
			`{"guards": {"g": {"kind": "adaptive", "config": {"MaxQueue": 5}}}}`,
			"guards.g.config.MaxQueue: pipeline: the setting cannot change while the guard runs: adaptive MaxQueue (none can; rename the guard to replace it, losing its state)"},
	} {
		s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
		mustApply(t, s, []byte(tc.before))
		_, err := s.ApplyJSON([]byte(tc.after))
		if !errors.Is(err, pipeline.ErrNotLive) || err.Error() != tc.want {
			t.Errorf("reload %s:\n error %v\n want  %s", tc.after, err, tc.want)
		}
	}
}

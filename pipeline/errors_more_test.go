package pipeline_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/pipeline"
)

// More faults of form and configuration, each an *Error at its path, with
// the exact message where the message quotes the document.
func TestMoreErrorsNameTheirPath(t *testing.T) {
	long := `{"kind": "retry", "config": {"Attempts": 3}}` // 44 bytes: shortened to 37 and "..."
	forty := `"01234567890123456789012345678901234567"`    // 40 bytes: kept
	for _, tc := range []struct {
		doc, path, msg string
		exact          bool // msg is the whole error, path included
	}{
		{`{"guards": {"b": {"kind": "breaker", "config": 7}}}`, "guards.b.config", "breaker: ", false},
		{`{"pipelines": {"p": null}}`, "pipelines.p", "pipelines.p: pipeline: a pipeline is a JSON array of layers, got null", true},
		{`{"pipelines": {"p": ` + long + `}}`, "pipelines.p", `pipelines.p: pipeline: a pipeline is a JSON array of layers, got {"kind": "retry", "config": {"Attempt...`, true},
		{`{"pipelines": {"p": ` + forty + `}}`, "pipelines.p", "pipelines.p: pipeline: a pipeline is a JSON array of layers, got " + forty, true},
		{`null`, "$", "$: pipeline: a JSON object is expected, got null", true},
		{`{"guards": `, "$", "$: pipeline: unexpected end of JSON input", true},
		{`{"guards": {"b" 1}}`, "$", "$: pipeline: invalid character '1' after object key", true},
		{`{"pipelines": {"p": [{"kind": 3}]}}`, "pipelines.p[0].kind", "pipelines.p[0].kind: pipeline: a string is expected, got 3", true},
		{`{"pipelines": {"p": [{"guard": ["b"]}]}}`, "pipelines.p[0].guard", `pipelines.p[0].guard: pipeline: a string is expected, got ["b"]`, true},
		{`{"guards": {"A0-Z9_az": {"kind": "fuse"}}}`, "guards.A0-Z9_az.kind", `unknown guard kind "fuse"`, false},
		{`{"guards": {"": {"kind": "breaker"}}}`, `guards[""]`, `guards[""]: pipeline: a guard needs a name`, true},
		{`{"pipelines": {"": []}}`, `pipelines[""]`, `pipelines[""]: pipeline: a pipeline needs a name`, true},
		{`{"guards": {"x": {}}}`, "guards.x.kind", "guards.x.kind: pipeline: a guard needs a kind (adaptive, breaker, bulkhead, ratelimit, throttle)", true},
		{`{"guards": {"x": {"kind": "tag"}}}`, "guards.x.kind", "pipeline: tag is not a guard kind", false},
		{`{"guards": {"b": {"kind": "breaker"}}, "pipelines": {"p": [{"guard": "b", "config": 1}]}}`, "pipelines.p[0]", "not both", false},
		{`{"pipelines": {"p": [{"kind": "hedge", "config": {}}]}}`, "pipelines.p[0].config.Delay", "hedge: Delay must be set", false},
		{`{"pipelines": {"p": [{"kind": "hedge", "config": {"Delay": "1s", "MaxHedges": -1}}]}}`, "pipelines.p[0].config.MaxHedges", "hedge: ", false},
		{`{"guards": {"a": {"kind": "adaptive", "config": {"MaxQueue": -1}}}}`, "guards.a.config.MaxQueue", "adaptive: ", false},
		{`{"guards": {"t": {"kind": "throttle", "config": {"Nope": 1}}}}`, "guards.t.config.Nope", "unknown field", false},
	} {
		_, err := build(tc.doc, tagKind(func(string) {}))
		var pe *pipeline.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *pipeline.Error", tc.doc, err)
			continue
		}
		if tc.exact && err.Error() != tc.msg || !tc.exact && !strings.Contains(err.Error(), tc.msg) || pe.Path != tc.path {
			t.Errorf("%s:\n error %q\n path  %q, want path %q and a message %q (exact: %v)", tc.doc, err, pe.Path, tc.path, tc.msg, tc.exact)
		}
	}
}

// A bulkhead of one slot, a rate limiter that waits up to 1ns and a hedge
// of a 1ns delay are valid: the smallest settings are not "unset".
func TestSmallestSettingsAreValid(t *testing.T) {
	ps, err := build(`{"guards": {
		"h": {"kind": "bulkhead", "config": {"MaxConcurrent": 1}},
		"l": {"kind": "ratelimit", "config": {"Rate": 1, "Burst": 1, "MaxWait": "1ns"}}},
		"pipelines": {"p": [{"kind": "hedge", "config": {"Delay": "1ns"}}, {"guard": "h"}, {"guard": "l"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := ps.Policies["p"].Layers()[2].MaxWait; got != 1 {
		t.Errorf("the rate limiter's layer waits up to %v, want 1ns (a WaitPolicy)", got)
	}
}

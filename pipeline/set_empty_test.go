package pipeline_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/pipeline"
)

// A Set before its first Apply has version 0 and no pipelines or guards;
// after it, a name it does not have is still none.
func TestSetBeforeAndBesideItsDocument(t *testing.T) {
	s := pipeline.NewSet[int]()
	if v, g := s.Version(), s.Guard("b"); v != 0 || g != nil {
		t.Errorf("before Apply: Version, Guard = %d, %v; want 0, nil", v, g)
	}
	if _, ok := s.Current("p"); ok {
		t.Error("before Apply: Current(p) found a pipeline")
	}
	mustApply(t, s, []byte(`{"guards": {"b": {"kind": "breaker"}}, "pipelines": {"p": []}}`))
	if g := s.Guard("nope"); g != nil {
		t.Errorf("Guard(nope) = %v, want nil", g)
	}
	if _, err := s.ApplyJSON([]byte(`{`)); err == nil {
		t.Error("ApplyJSON of a broken document succeeded")
	}
	if v := s.Version(); v != 1 {
		t.Errorf("Version after a broken document = %d, want 1", v)
	}
}

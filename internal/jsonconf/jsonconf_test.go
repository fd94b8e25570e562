package jsonconf_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

type sample struct {
	Name    string
	Count   int
	Wait    time.Duration
	Off     time.Duration
	Rate    float64
	Enabled bool
	Hook    func()    // skipped
	Shared  *struct{} // skipped
	Other   any       // skipped
	hidden  int
}

func TestRoundTrip(t *testing.T) {
	in := sample{Name: "db", Count: 3, Wait: 250 * time.Millisecond, Off: -1, Rate: math.Inf(1), Enabled: true, Hook: func() {}, Shared: &struct{}{}, Other: 1, hidden: 7}
	data, err := jsonconf.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"Name":"db","Count":3,"Wait":"250ms","Off":"off","Rate":"+Inf","Enabled":true}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var out sample
	if err := jsonconf.Unmarshal("pkg", data, &out); err != nil {
		t.Fatal(err)
	}
	in.Hook, in.Shared, in.Other, in.hidden = nil, nil, nil, 0
	if diff := cmp.Diff(in, out, cmp.AllowUnexported(sample{}), cmp.Comparer(func(a, b func()) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestZeroIsEmptyObject(t *testing.T) {
	data, err := jsonconf.Marshal(sample{})
	if err != nil || string(data) != "{}" {
		t.Errorf("Marshal(zero) = %s, %v; want {}, nil", data, err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"Wait": 250}`, `pkg: sample.Wait: a duration must be a string`},
		{`{"Wait": "soon"}`, `pkg: sample.Wait: time: invalid duration`},
		{`{"Bogus": 1}`, `pkg: sample: unknown field "Bogus"`},
		{`{"Hook": 1}`, `pkg: sample: unknown field "Hook"`},
		{`{"Rate": "fast"}`, `pkg: sample.Rate: a number, "+Inf" or "-Inf"`},
		{`{"Count": "3"}`, `pkg: sample.Count: json: cannot unmarshal`},
		{`[1]`, `pkg: sample: a JSON object is expected, got array`},
	}
	for _, tt := range tests {
		var s sample
		err := jsonconf.Unmarshal("pkg", []byte(tt.in), &s)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error starting %q", tt.in, err, tt.want)
		}
	}
}

func TestUnmarshalCaseInsensitiveAndNull(t *testing.T) {
	s := sample{Count: 9}
	if err := jsonconf.Unmarshal("pkg", []byte(`{"wait":"1s","count":null,"RATE":2.5}`), &s); err != nil {
		t.Fatal(err)
	}
	want := sample{Count: 9, Wait: time.Second, Rate: 2.5}
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(sample{}), cmp.Comparer(func(a, b func()) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestMarshalNaN(t *testing.T) {
	if _, err := jsonconf.Marshal(sample{Rate: math.NaN()}); err == nil || !strings.Contains(err.Error(), "sample.Rate") {
		t.Errorf("Marshal(NaN) error = %v; want one naming sample.Rate", err)
	}
}

// Duration spells a duration as a Config's JSON does: Off as "off".
func TestDuration(t *testing.T) {
	got := []string{jsonconf.Duration(-1), jsonconf.Duration(0), jsonconf.Duration(-2), jsonconf.Duration(250 * time.Millisecond)}
	if diff := cmp.Diff([]string{"off", "0s", "-2ns", "250ms"}, got); diff != "" {
		t.Errorf("Duration mismatch (-want +got):\n%s", diff)
	}
}

// A key given twice is an error, not the last one silently.
func TestDuplicateKeyIsAnError(t *testing.T) {
	var c struct{ A, B int }
	err := jsonconf.Unmarshal("pkg", []byte(`{"A": 1, "B": 2, "A": 3}`), &c)
	if err == nil || !strings.Contains(err.Error(), `pkg: `) || !strings.Contains(err.Error(), `the key "A" appears twice`) {
		t.Errorf("error %v, want one saying the key \"A\" appears twice", err)
	}
	if key, dup := jsonconf.DuplicateKey([]byte(`{"A": {"A": 1}, "B": [1, 1]}`)); dup {
		t.Errorf("DuplicateKey found %q in an object without one (nested keys are their own objects')", key)
	}
}

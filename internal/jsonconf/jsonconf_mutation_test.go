package jsonconf_test

import (
	"math"
	"testing"

	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

// TestInfinitiesKeepTheirSign: +Inf and -Inf are written as "+Inf" and
// "-Inf" and read back with their sign.
func TestInfinitiesKeepTheirSign(t *testing.T) {
	type rates struct{ Up, Down float64 }
	in := rates{Up: math.Inf(1), Down: math.Inf(-1)}
	data, err := jsonconf.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Up":"+Inf","Down":"-Inf"}`; string(data) != want {
		t.Errorf("Marshal = %s, want %s", data, want)
	}
	var out rates
	if err := jsonconf.Unmarshal("pkg", data, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip = %+v, want %+v", out, in)
	}
}

// TestCaseInsensitiveMatchTakesTheFirstField: a key that matches several
// fields case-insensitively, none exactly, sets the first of them, as
// encoding/json does.
func TestCaseInsensitiveMatchTakesTheFirstField(t *testing.T) {
	var out struct{ Rate, RATE float64 }
	if err := jsonconf.Unmarshal("pkg", []byte(`{"rate":2}`), &out); err != nil {
		t.Fatal(err)
	}
	if out.Rate != 2 || out.RATE != 0 {
		t.Errorf(`Unmarshal {"rate":2} = %+v, want Rate 2`, out)
	}
}

package dashdemo

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A zero field of Config means its documented default; a set one is kept.
func TestConfigDefaults(t *testing.T) {
	for _, c := range []struct{ in, want Config }{
		{Config{}, Config{Rate: 25, Phase: 5 * time.Second, Timeout: 150 * time.Millisecond, Cooldown: 500 * time.Millisecond}},
		{
			Config{Rate: 50, Phase: time.Second, Timeout: time.Second, Cooldown: 2 * time.Second},
			Config{Rate: 50, Phase: time.Second, Timeout: time.Second, Cooldown: 2 * time.Second},
		},
	} {
		d, err := New(c.in)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		if diff := cmp.Diff(c.want, d.cfg); diff != "" {
			t.Errorf("New(%+v): settings mismatch (-want +got):\n%s", c.in, diff)
		}
	}
}

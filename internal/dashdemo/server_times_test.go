package dashdemo

import (
	"context"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// Each dependency answers in the time its script gives it (on the fake
// clock of a synctest bubble), with its status and body: prices 2 to 6
// ms while healthy or recovered, a 500 in 1 to 3 ms while failing, no
// answer while hanging until the client gives up (or a whole phase);
// inventory 2 to 8 ms; search 10 to 40 ms, one call in 50 at 120 to 125
// ms, and 3 % of 500s; recommendations at once.
func TestServerTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := newInMemory(t, Config{Phase: time.Second})
		defer d.Close()
		type answer struct {
			took time.Duration
			code int
			body string
		}
		serve := func(ctx context.Context, path string) answer {
			rec := httptest.NewRecorder()
			start := time.Now()
			d.serve(rec, httptest.NewRequest("GET", path, nil).WithContext(ctx))
			return answer{time.Since(start), rec.Code, rec.Body.String()}
		}
		const n = 200 // draws of each random delay
		for _, c := range []struct {
			phase  Phase
			path   string
			lo, hi time.Duration
			code   int
		}{
			{Healthy, "/prices", 2 * time.Millisecond, 6 * time.Millisecond, 200},
			{Recovered, "/prices", 2 * time.Millisecond, 6 * time.Millisecond, 200},
			{Failing, "/prices", time.Millisecond, 3 * time.Millisecond, 500},
			{Healthy, "/inventory", 2 * time.Millisecond, 8 * time.Millisecond, 200},
			{Healthy, "/recommendations", 0, 0, 200},
		} {
			d.phase.Store(int32(c.phase))
			for range n {
				a := serve(context.Background(), c.path)
				if a.took < c.lo || a.took > c.hi || a.code != c.code {
					t.Fatalf("%s in the %s phase: %d after %v, want %d after %v to %v", c.path, c.phase, a.code, a.took, c.code, c.lo, c.hi)
				}
				if a.code == 200 && a.body != "42.00" {
					t.Fatalf("%s in the %s phase answered %q, want 42.00", c.path, c.phase, a.body)
				}
			}
		}

		d.phase.Store(int32(Hanging))
		if a := serve(context.Background(), "/prices"); a.took != time.Second || a.body != "" {
			t.Errorf("hanging /prices, a client that waits: %q after %v, want nothing after the phase (1s)", a.body, a.took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		if a := serve(ctx, "/prices"); a.took != 150*time.Millisecond || a.body != "" {
			t.Errorf("hanging /prices, a client that gives up at 150ms: %q after %v, want nothing after 150ms", a.body, a.took)
		}

		// search: a slow tail and a few failures, counted over many calls.
		const calls = 30000
		var slow, failed int
		for range calls {
			a := serve(context.Background(), "/search")
			switch {
			case a.took >= 10*time.Millisecond && a.took <= 40*time.Millisecond:
			case a.took >= 120*time.Millisecond && a.took <= 125*time.Millisecond:
				slow++
			default:
				t.Fatalf("/search answered after %v, want 10 to 40ms or 120 to 125ms", a.took)
			}
			switch {
			case a.code == 500:
				failed++
			case a.code != 200 || a.body != "42.00":
				t.Fatalf("/search answered %d %q, want 200 42.00 or a 500", a.code, a.body)
			}
		}
		// 1 in 50 is 600 of 30000 (sd 24), 3 % is 900 (sd 30): bounds at 5 sd.
		if slow < 480 || slow > 720 {
			t.Errorf("/search: %d slow calls of %d, want about 600 (1 in 50)", slow, calls)
		}
		if failed < 750 || failed > 1050 {
			t.Errorf("/search: %d 500s of %d, want about 900 (3 %%)", failed, calls)
		}
	})
}

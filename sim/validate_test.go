package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Each field of a Scenario and of its Server is checked on its own, with
// the message naming it; a field at the edge of what its doc allows is
// valid.
func TestValidateEachField(t *testing.T) {
	ok := Clients{N: 1}
	with := func(s Server) Scenario { return Scenario{Server: s, Clients: []Clients{ok}} }
	for _, c := range []struct {
		name string
		s    Scenario
		want string // "" for valid
	}{
		{"zero Duration and Bucket", Scenario{Clients: []Clients{{}}}, ""},
		{"1ns Duration and Bucket", Scenario{Duration: 1, Bucket: 1, Clients: []Clients{ok}}, ""},
		{"zero client times", Scenario{Clients: []Clients{{N: 0, Start: 0, Ramp: 0, Stop: 0, Calls: 0, Think: 0}}}, ""},
		{"negative Start", Scenario{Clients: []Clients{ok, {Start: -1}}},
			"sim: Scenario.Clients[1] times must be >= 0, got Start -1ns, Ramp 0s, Stop 0s, Think 0s"},
		{"negative Ramp", Scenario{Clients: []Clients{{Ramp: -1}}},
			"sim: Scenario.Clients[0] times must be >= 0, got Start 0s, Ramp -1ns, Stop 0s, Think 0s"},
		{"negative Stop", Scenario{Clients: []Clients{{Stop: -1}}},
			"sim: Scenario.Clients[0] times must be >= 0, got Start 0s, Ramp 0s, Stop -1ns, Think 0s"},
		{"negative Think", Scenario{Clients: []Clients{{Think: -1}}},
			"sim: Scenario.Clients[0] times must be >= 0, got Start 0s, Ramp 0s, Stop 0s, Think -1ns"},
		{"a bad server before a bad client", Scenario{Server: Server{Base: -1}, Clients: []Clients{{N: -1}}},
			"sim: Server.Base must be >= 0, got -1ns"},
		{"the zero Server", with(Server{}), ""},
		{"Slow 0 and 1", with(Server{Slow: 1, SlowLatency: 1}), ""},
		{"negative Slow", with(Server{Slow: -0.5, SlowLatency: 1}), "sim: Server.Slow must be in [0, 1], got -0.5"},
		{"SlowLatency without Slow", with(Server{SlowLatency: time.Second}), ""},
		{"a zero SlowLatency with Slow", with(Server{Slow: 0.5}), "sim: Server.SlowLatency must be > 0 with Slow 0.5, got 0s"},
		{"a negative SlowLatency without Slow", with(Server{SlowLatency: -1}), "sim: Server.SlowLatency must be >= 0, got -1ns"},
		{"a negative SlowLatency with Slow", with(Server{Slow: 0.5, SlowLatency: -1}),
			"sim: Server.SlowLatency must be > 0 with Slow 0.5, got -1ns"},
		{"Workers and Resizes", with(Server{Workers: 1, Resizes: []Resize{{At: 0, Workers: 1}, {At: 0, Workers: 2}, {At: 5, Workers: 1}}}), ""},
		{"negative Workers", with(Server{Workers: -1}), "sim: Server.Workers must be >= 0, got -1"},
		{"Resizes without Workers", with(Server{Resizes: []Resize{{At: 1, Workers: 1}}}), "sim: Server.Resizes need Server.Workers >= 1, got 0"},
		{"a Resize to 0 Workers", with(Server{Workers: 1, Resizes: []Resize{{At: 1, Workers: 1}, {At: 2, Workers: 0}}}),
			"sim: Server.Resizes[1].Workers must be >= 1, got 0"},
		{"a Resize at a negative At", with(Server{Workers: 1, Resizes: []Resize{{At: -1, Workers: 1}}}),
			"sim: Server.Resizes[0].At must be >= 0 and in order, got -1ns"},
		{"Resizes out of order", with(Server{Workers: 1, Resizes: []Resize{{At: 2, Workers: 1}, {At: 1, Workers: 1}}}),
			"sim: Server.Resizes[1].At must be >= 0 and in order, got 1ns"},
		{"an empty outage at 0, a Hang outage", with(Server{Outages: []Outage{{}, {Start: 1, End: 2, Mode: Hang}}}), ""},
		{"an outage at a negative Start", with(Server{Outages: []Outage{{Start: -1, End: 1}}}),
			"sim: Server.Outages[0] needs 0 <= Start <= End, got Start -1ns, End 1ns"},
		{"an outage that ends before it starts", with(Server{Outages: []Outage{{Start: 2, End: 1}}}),
			"sim: Server.Outages[0] needs 0 <= Start <= End, got Start 2ns, End 1ns"},
		{"a second outage of a bad mode", with(Server{Outages: []Outage{{End: 1}, {Mode: -1}}}),
			"sim: Server.Outages[1].Mode must be Down or Hang, got -1"},
	} {
		got := ""
		if err := c.s.Validate(); err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: Validate mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

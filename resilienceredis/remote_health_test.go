package resilienceredis

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// A guard's view of Redis's health (remote, the state behind the
// LimiterLocal and RetryBudgetLocal spells and the snapshots' "local"):
// after a round trip fails at t0, no decision asks Redis until
// t0+ProbeInterval (downUntil: "when a decision may try Redis again");
// from that instant one decision, the probe, asks and holds the others
// local for another ProbeInterval while it is out; an answer lets every
// decision ask again.
func TestRemoteProbeAfterInterval(t *testing.T) {
	const probe = time.Second
	const t0 = int64(1_000_000_000_000)
	p := int64(probe)
	r := newRemote(newClient(t), time.Second, probe)
	if !r.usable(t0, noSlot) {
		t.Fatal("usable before any failure = false")
	}
	r.failed(t0, noSlot)
	at := []int64{t0, t0 + p - 1, t0 + p, t0 + p, t0 + 2*p - 1}
	var got []bool
	for _, now := range at {
		got = append(got, r.usable(now, noSlot))
	}
	// Down until t0+p; the probe at t0+p; the second decision at that
	// instant and those until t0+2p stay local while it is out.
	want := []bool{false, false, true, false, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usable at t0, t0+ProbeInterval-1ns, t0+ProbeInterval (twice), t0+2·ProbeInterval-1ns mismatch (-want +got):\n%s", diff)
	}
	r.answered(noSlot)
	first, second := r.usable(t0+p, noSlot), r.usable(t0+p, noSlot)
	if !first || !second || r.down() {
		t.Errorf("after an answer: usable %v, %v, down %v; want true, true, false", first, second, r.down())
	}
}

// down (a Limiter's Snapshot State "local") is true from a failed round
// trip to the next answer, for a guard whose health is one for all its
// keys: a failed probe keeps it down, one answer ends it.
func TestRemoteDownUntilAnswered(t *testing.T) {
	const t0 = int64(1_000_000_000_000)
	r := newRemote(newClient(t), time.Second, time.Second)
	var got []bool
	r.failed(t0, noSlot)
	got = append(got, r.down())
	r.answered(noSlot)
	got = append(got, r.down())
	r.failed(t0, noSlot)
	r.failed(t0+int64(time.Second), noSlot) // the probe failed too
	got = append(got, r.down())
	r.answered(noSlot)
	got = append(got, r.down())
	if diff := cmp.Diff([]bool{true, false, true, false}, got); diff != "" {
		t.Errorf("down after failed, answered, failed twice, answered mismatch (-want +got):\n%s", diff)
	}
}

// On a cluster client a keyed limiter's health is per slot: a slot that
// fails holds only its own decisions local, and down (its Snapshot's
// "local") is true while any slot is down (nDown counts the slots whose
// downUntil is not 0): through a failed probe, for slot 0 as for any
// other, until every failed slot has answered (an answer on a slot that
// was not down changes nothing).
func TestRemoteDownPerSlot(t *testing.T) {
	const t0 = int64(1_000_000_000_000)
	p := int64(time.Second)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{redistest.Addr(t)}})
	t.Cleanup(func() { cc.Close() })
	newSlotted := func() *remote {
		r := newRemote(cc, time.Second, time.Second)
		r.perSlot()
		if r.slots == nil {
			t.Fatal("perSlot on a cluster client: no per-slot health")
		}
		return &r
	}
	for _, slot := range []int{0, 7, clusterSlots - 1} {
		r := newSlotted()
		r.failed(t0, slot)
		other := (slot + 1) % clusterSlots
		if !r.down() || r.usable(t0, slot) || !r.usable(t0, other) {
			t.Errorf("slot %d failed: down %v, usable(slot) %v, usable(slot %d) %v; want true, false, true", slot, r.down(), r.usable(t0, slot), other, r.usable(t0, other))
		}
		r.failed(t0+p, slot) // its probe failed
		if !r.down() {
			t.Errorf("slot %d: its probe failed: down = false", slot)
		}
		r.answered(slot)
		if r.down() {
			t.Errorf("slot %d failed twice, then answered: down = true", slot)
		}
	}
	r := newSlotted()
	r.failed(t0, 7)
	r.failed(t0, 9)
	r.answered(8) // a slot that was not down
	r.answered(7)
	if !r.down() {
		t.Error("slots 7 and 9 failed, 8 (not down) and 7 answered: down = false")
	}
	r.answered(9)
	if r.down() {
		t.Error("slots 7 and 9 failed and answered: down = true")
	}
}

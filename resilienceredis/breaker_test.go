package resilienceredis

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

var errBoom = errors.New("boom")

// manual returns an instance without its goroutines, on its own client:
// the test flushes and syncs it by hand.
func manual(t *testing.T, addr, prefix string, opts ...BreakerOption) *Breaker {
	t.Helper()
	opts = append([]BreakerOption{WithPrefix(prefix), WithTimeout(5 * time.Second)}, opts...)
	b := newBreaker(clientOf(t, addr), "svc", opts)
	t.Cleanup(func() { b.Close() })
	return b
}

// running returns an instance with its goroutines, on its own client.
func running(t *testing.T, addr, prefix string, opts ...BreakerOption) *Breaker {
	t.Helper()
	opts = append([]BreakerOption{WithPrefix(prefix), WithFlushInterval(10 * time.Millisecond)}, opts...)
	b := NewBreaker(clientOf(t, addr), "svc", opts...)
	t.Cleanup(func() { b.Close() })
	return b
}

// fail makes one call through b that fails, if b admits it.
func fail(b *Breaker) error {
	p, err := b.Allow()
	if err == nil {
		p.Done(errBoom)
	}
	return err
}

func succeed(b *Breaker) error {
	p, err := b.Allow()
	if err == nil {
		p.Done(nil)
	}
	return err
}

// sharedState reads the shared hash of the breaker named svc.
func sharedState(t *testing.T, rdb *redis.Client, prefix string) map[string]string {
	t.Helper()
	m, err := rdb.HGetAll(context.Background(), prefix+"br:{svc}").Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The lost-update schedule: A reads the state, B fails and writes, A
// fails and writes. Both failures count: the counts are added by the
// script, never written back from what an instance read.
func TestBreakerNoLostUpdate(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(10))
	b := manual(t, addr, prefix, WithThreshold(10))
	a.sync() // A reads
	b.sync()
	if err := fail(b); err != nil {
		t.Fatal(err)
	}
	b.flush() // B fails and writes
	if err := fail(a); err != nil {
		t.Fatal(err)
	}
	a.flush() // A fails and writes, from what it read before B's write
	got := sharedState(t, newClient(t), prefix)
	if diff := cmp.Diff(map[string]string{"gen": "1", "st": "0", "streak": "2"}, map[string]string{"gen": got["gen"], "st": got["st"], "streak": got["streak"]}); diff != "" {
		t.Errorf("shared state after A reads, B fails, A fails mismatch (-want +got):\n%s", diff)
	}
}

// A stale instance cannot write over a newer state: its batch, counted for
// an older generation, is dropped by the fenced script, and the instance
// learns the newer state from the reply.
func TestBreakerFencesStaleBatches(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	b := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	a.sync()
	b.sync()
	fail(b)
	if err := fail(b); err != nil {
		t.Fatal(err)
	}
	b.flush() // trips: generation 2, open
	if err := fail(a); err != nil {
		t.Fatalf("A, which has not learnt of the trip, refused: %v", err)
	}
	if err := succeed(a); err != nil {
		t.Fatal(err)
	}
	a.flush()
	got := sharedState(t, newClient(t), prefix)
	if got["gen"] != "2" || got["st"] != "1" || got["streak"] != "0" {
		t.Errorf("shared state = gen %s st %s streak %s; want gen 2, open, streak 0: A's stale batch was applied", got["gen"], got["st"], got["streak"])
	}
	if a.batch.bad != 2 {
		t.Errorf("A's outcomes dropped by the fence = %d, want 2", a.batch.bad)
	}
	if s := a.State(); s != breaker.Open {
		t.Errorf("A's state after the fenced reply = %v, want open", s)
	}
	var re *resilience.RefusedError
	if err := fail(a); !errors.As(err, &re) || !errors.Is(err, breaker.ErrOpen) || re.RetryAfter() < 59*time.Minute {
		t.Errorf("A's call after learning of the trip: %v; want ErrOpen with about an hour to wait", err)
	}
}

// The consecutive rule counts failures across instances in the order
// their batches reach Redis: it trips at the threshold, not at instances
// times it, and a success in a batch breaks the streak.
func TestBreakerTripsAtFleetThreshold(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	var inst []*Breaker
	for range 3 {
		inst = append(inst, manual(t, addr, prefix, WithThreshold(5), WithCooldown(time.Hour)))
	}
	for _, b := range inst {
		b.sync()
	}
	// A success after 2 failures on instance 0: the streak restarts.
	fail(inst[0])
	fail(inst[0])
	succeed(inst[0])
	inst[0].flush()
	rdb := newClient(t)
	for i := range 4 { // 4 failures, one instance after the other
		b := inst[i%3]
		if err := fail(b); err != nil {
			t.Fatalf("failure %d refused: %v", i, err)
		}
		b.flush()
	}
	if got := sharedState(t, rdb, prefix); got["st"] != "0" || got["streak"] != "4" {
		t.Fatalf("after 4 failures across the fleet: st %s, streak %s; want closed, 4", got["st"], got["streak"])
	}
	fail(inst[1])
	inst[1].flush()
	if got := sharedState(t, rdb, prefix); got["st"] != "1" || got["gen"] != "2" {
		t.Fatalf("after the 5th failure across the fleet: st %s gen %s; want open, gen 2", got["st"], got["gen"])
	}
	for i, b := range inst {
		b.sync()
		if s := b.State(); s != breaker.Open {
			t.Errorf("instance %d state = %v, want open", i, s)
		}
	}
}

// Within one batch the streak's peak counts: failures before the batch's
// first success add to the streak carried in, and a run inside the batch
// counts on its own.
func TestBreakerBatchStreakPeak(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Hour))
	a.sync()
	fail(a)
	fail(a)
	a.flush() // streak 2
	// One failure, a success, then one failure: the peak is 3 (2 + 1).
	fail(a)
	succeed(a)
	fail(a)
	a.flush()
	if s := a.State(); s != breaker.Open {
		t.Errorf("state = %v, want open: the peak streak was 3", s)
	}

	b := manual(t, addr, testPrefix(t), WithThreshold(3), WithCooldown(time.Hour))
	b.sync()
	succeed(b)
	fail(b)
	fail(b)
	fail(b)
	succeed(b)
	b.flush()
	if s := b.State(); s != breaker.Open {
		t.Errorf("state = %v, want open: a run of 3 inside one batch", s)
	}
}

// The failure-ratio rule over the shared window.
func TestBreakerFailureRatio(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(resilience.Off), WithFailureRatio(0.5), WithMinCalls(10), WithCooldown(time.Hour))
	b := manual(t, addr, prefix, WithThreshold(resilience.Off), WithFailureRatio(0.5), WithMinCalls(10), WithCooldown(time.Hour))
	a.sync()
	b.sync()
	for range 4 {
		succeed(a)
		fail(b)
	}
	a.flush()
	b.flush()
	if s := b.State(); s != breaker.Closed {
		t.Fatalf("8 calls, half failed, below MinCalls: state %v, want closed", s)
	}
	succeed(a)
	a.flush()
	fail(b)
	b.flush() // 10 calls, 5 failures
	if s := b.State(); s != breaker.Open {
		t.Errorf("10 calls across two instances, half failed: state %v, want open", s)
	}
}

// While closed no call makes a Redis round trip: 1000 calls, then one
// flush, are one command.
func TestBreakerClosedPathMakesNoRoundTrip(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	rdb := clientOf(t, addr)
	var cmds atomic.Int64
	rdb.AddHook(countHook{&cmds})
	b := newBreaker(rdb, "svc", []BreakerOption{WithPrefix(prefix), WithTimeout(5 * time.Second)})
	defer b.Close()
	b.sync()
	// The server has the flush script (a first EVALSHA of a fresh server
	// would get NOSCRIPT and send EVAL: two commands for one flush).
	if err := flushScript.Load(ctxFor(t), rdb).Err(); err != nil {
		t.Fatal(err)
	}
	before := cmds.Load()
	p := BreakerPolicy[int](b)
	for i := range 1000 {
		if _, err := p.Do(ctxFor(t), func(context.Context) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n := cmds.Load() - before; n != 0 {
		t.Errorf("1000 closed calls made %d Redis commands, want 0", n)
	}
	b.flush()
	if n := cmds.Load() - before; n != 1 {
		t.Errorf("one flush of 1000 outcomes made %d Redis commands, want 1", n)
	}
	if b.batch.sent != 1000 {
		t.Errorf("outcomes sent = %d, want 1000", b.batch.sent)
	}
}

type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "hello" && cmd.Name() != "client" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A batch that reaches MaxBatch is sent at once, long before the flush
// interval.
func TestBreakerMaxBatchFlushesEarly(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	b := running(t, addr, prefix, WithFlushInterval(time.Second), WithMaxBatch(10), WithThreshold(100))
	rdb := newClient(t)
	redistest.Eventually(t, 5*time.Second, "the instance learns the shared state", func() (bool, string) {
		return b.ep.Load() != 0, "no epoch"
	})
	start := time.Now()
	for range 10 {
		fail(b)
	}
	redistest.Eventually(t, 900*time.Millisecond, "a full batch is sent before the 1s interval", func() (bool, string) {
		s := sharedState(t, rdb, prefix)["streak"]
		return s == "10", "shared streak " + s
	})
	t.Logf("a full batch reached Redis %v after its first outcome", time.Since(start))
}

// A trip reaches every instance by pub/sub: from the failing call to the
// last instance's transition to open, with the batch sent by the
// instance's own trip (Threshold 1: it holds its calls and sends at once)
// under the default flush interval, and as a full batch (MaxBatch 1). The
// contract is the path, not a time: the other instances make no calls and
// read the state only every ProbeInterval, an hour here, so nothing but
// the published message can tell them of the trip before the test ends
// (the 10s wait only ends a test whose message never came). Each instance
// is subscribed before the trip (PUBSUB NUMSUB), so the message cannot be
// missed; TestBreakerResubscribeReadsState covers one that was. The
// propagation time is logged (README, Measurements), not asserted: on a
// loaded machine it is scheduling.
func TestBreakerTripPropagates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flush []BreakerOption
	}{
		{"default flush interval", []BreakerOption{WithFlushInterval(0)}},
		{"batch of one", []BreakerOption{WithFlushInterval(time.Second), WithMaxBatch(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, prefix := redistest.Addr(t), testPrefix(t)
			const n = 3
			seen := make(chan time.Time, 16*n)
			var inst []*Breaker
			for range n {
				inst = append(inst, running(t, addr, prefix, append([]BreakerOption{WithThreshold(1), WithCooldown(time.Hour),
					WithProbeInterval(time.Hour), WithTimeout(5 * time.Second),
					WithOnStateChange(func(tr breaker.Transition) {
						if tr.To == breaker.Open {
							seen <- time.Now()
						}
					})}, tc.flush...)...))
			}
			learnt(t, inst...)
			subscribed(t, newClient(t), stateKey(prefix), n)
			start := time.Now()
			fail(inst[0])
			var worst time.Duration
			for i := range n {
				select {
				case at := <-seen:
					worst = max(worst, at.Sub(start))
				case <-time.After(10 * time.Second):
					t.Fatalf("only %d of %d instances saw the trip (by pub/sub: ProbeInterval is an hour)", i, n)
				}
			}
			t.Logf("propagation (%s): failure to open on all %d instances: %v", tc.name, n, worst)
			for i, b := range inst {
				if s := b.State(); s != breaker.Open {
					t.Errorf("instance %d: %v, want open", i, s)
				}
			}
		})
	}
}

// subscribed waits until n clients of the server of rdb are subscribed to
// channel.
func subscribed(t *testing.T, rdb *redis.Client, channel string, n int64) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, "the instances subscribe", func() (bool, string) {
		got := numSub(t, rdb, channel)
		return got == n, strconv.FormatInt(got, 10) + " subscribed"
	})
}

// numSub returns the number of clients of the server of rdb subscribed to
// channel.
func numSub(t *testing.T, rdb *redis.Client, channel string) int64 {
	t.Helper()
	m, err := rdb.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[channel]
}

// An instance may miss published transitions while it is not subscribed
// (its connection for pub/sub is made again, or its first subscription
// comes after its first read of the state): it reads the state as soon as
// it is subscribed again, not at its next probe. Here the instance makes
// no calls and reads the state only every ProbeInterval, an hour: only
// that read can tell it of the transition it missed. The server refuses
// new connections (maxclients) while the instance's connection for
// pub/sub is killed and the breaker trips, so the instance cannot
// subscribe again before the trip.
func TestBreakerResubscribeReadsState(t *testing.T) {
	s := redistest.Start(t)
	prefix := testPrefix(t)
	rdb := clientOf(t, s.Addr)
	ctx := context.Background()
	opts := []BreakerOption{WithThreshold(1), WithCooldown(time.Hour), WithProbeInterval(time.Hour), WithTimeout(5 * time.Second)}
	v := running(t, s.Addr, prefix, opts...)
	other := manual(t, s.Addr, prefix, opts...)
	learnt(t, v)
	other.sync() // other and rdb hold their connections: only v needs a new one
	subscribed(t, rdb, stateKey(prefix), 1)
	limit, err := rdb.ConfigGet(ctx, "maxclients").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]any{{"config", "set", "maxclients", "1"}, {"client", "kill", "type", "pubsub"}} {
		if err := rdb.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fail(other)
	other.flush() // trips, and publishes it
	if got := numSub(t, rdb, stateKey(prefix)); got != 0 {
		t.Fatalf("%d subscribed while the server refused connections, want 0", got)
	}
	if s := v.State(); s != breaker.Closed {
		t.Fatalf("the instance learnt the trip while it was not subscribed: %v", s)
	}
	if err := rdb.ConfigSet(ctx, "maxclients", limit["maxclients"]).Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the instance reads the state it missed once subscribed again", func() (bool, string) {
		return v.State() == breaker.Open, v.State().String()
	})
}

// A trial's permit is of the generation Redis admitted it in, even when
// the instance learns of a newer state while the trial's round trip is
// out (a message published after the script ran, read before its reply):
// its report is fenced by that generation, and the fleet counts trials
// per generation. Here the message comes while the server is stalled with
// the trial's script queued, and names a generation Redis never reached,
// so that the report shows which generation the permit holds: the trial's
// success closes the breaker only if the permit is of the trial's own.
func TestBreakerTrialPermitKeepsItsGeneration(t *testing.T) {
	s := redistest.Start(t)
	prefix := testPrefix(t)
	rdb := clientOf(t, s.Addr)
	v := manual(t, s.Addr, prefix, WithThreshold(1), WithCooldown(time.Minute))
	v.sync()
	fail(v)
	v.flush()
	v.shift.Store(time.Minute.Microseconds())
	v.sync()
	if st := v.State(); st != breaker.HalfOpen {
		t.Fatalf("after the cooldown: %v, want half-open", st)
	}
	g := viewGen(v.word.Load())
	pool := v.rem.rdb.(*redis.Client)
	before := pool.PoolStats().Hits + pool.PoolStats().Misses
	s.Pause(t)
	type result struct {
		p   *Permit
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := v.Allow()
		done <- result{&p, err}
	}()
	redistest.Eventually(t, 10*time.Second, "the trial's round trip is out", func() (bool, string) {
		st := pool.PoolStats()
		return st.Hits+st.Misses > before, "no connection taken"
	})
	v.receive(strconv.FormatInt(v.ep.Load(), 10) + " " + strconv.FormatUint(g+2, 10) + " 2 0")
	s.Resume(t)
	r := <-done
	if r.err != nil {
		t.Fatalf("the trial: %v, want admitted", r.err)
	}
	if got := viewGen(r.p.word); got != g {
		t.Errorf("the trial's permit is of generation %d, want %d (the one Redis admitted it in)", got, g)
	}
	r.p.Done(nil)
	v.sendReport(<-v.reports)
	if got := sharedState(t, rdb, prefix); got["st"] != "0" || got["gen"] != strconv.FormatUint(g+1, 10) {
		t.Errorf("after the trial's success (SuccessThreshold 1): gen %s st %s, want gen %d closed", got["gen"], got["st"], g+1)
	}
}

// Half-open trials are limited across the fleet: with MaxTrials 2 and 4
// instances, 2 trials in all; 2 successes close the breaker everywhere.
func TestBreakerTrialsAreFleetWide(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	opts := []BreakerOption{WithThreshold(1), WithCooldown(time.Hour), WithMaxTrials(2), WithSuccessThreshold(2)}
	var inst []*Breaker
	for range 4 {
		inst = append(inst, manual(t, addr, prefix, opts...))
	}
	inst[0].sync()
	fail(inst[0])
	inst[0].flush()
	for _, b := range inst {
		b.shift.Store(time.Hour.Microseconds()) // the server's time, an hour on: the cooldown is over
		b.sync()
		if s := b.State(); s != breaker.HalfOpen {
			t.Fatalf("after the cooldown: %v, want half-open", s)
		}
	}
	var mu sync.Mutex
	var permits []*Permit
	var refusals []string
	var wg sync.WaitGroup
	for _, b := range inst {
		for range 2 {
			wg.Go(func() {
				p, err := b.Allow()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					refusals = append(refusals, err.Error())
					return
				}
				permits = append(permits, &p)
			})
		}
	}
	wg.Wait()
	if len(permits) != 2 || len(refusals) != 6 {
		t.Fatalf("8 calls in half-open over 4 instances: %d admitted, %d refused (%q); want 2 and 6", len(permits), len(refusals), refusals)
	}
	for _, r := range refusals {
		if r != "breaker: too many trials (svc)" && r[:len("breaker: too many trials (svc)")] != "breaker: too many trials (svc)" {
			t.Errorf("refusal %q, want too many trials", r)
		}
	}
	for _, p := range permits {
		p.Done(nil)
	}
	for _, b := range inst { // the reports are sent by the background goroutine: by hand here
		for len(b.reports) > 0 {
			b.sendReport(<-b.reports)
		}
	}
	for i, b := range inst {
		b.sync()
		if s := b.State(); s != breaker.Closed {
			t.Errorf("instance %d after 2 successful trials: %v, want closed", i, s)
		}
	}
}

// A trial that never reports (its instance crashed) expires after
// TrialTimeout, fleet-wide, and opens the breaker again.
func TestBreakerTrialExpires(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(1), WithCooldown(time.Minute), WithTrialTimeout(10*time.Second))
	a.sync()
	fail(a)
	a.flush()
	a.shift.Store(time.Minute.Microseconds())
	a.sync()
	p, err := a.Allow()
	if err != nil || p.member == "" {
		t.Fatalf("the first call after the cooldown: %v, trial %q; want a trial", err, p.member)
	}
	if _, err := a.Allow(); !errors.Is(err, breaker.ErrTooManyTrials) {
		t.Fatalf("a second call while the trial is out: %v, want ErrTooManyTrials", err)
	}
	a.shift.Store((time.Minute + 11*time.Second).Microseconds()) // the trial is 11s old
	a.sync()
	if s := a.State(); s != breaker.Open {
		t.Errorf("after the trial expired: %v, want open again", s)
	}
	got := sharedState(t, newClient(t), prefix)
	if got["gen"] != "4" { // closed 1, open 2, half-open 3, open 4
		t.Errorf("generation = %s, want 4", got["gen"])
	}
	// Open again from the trial's expiry (1m10s) for a cooldown: until 2m10s.
	a.shift.Store((2*time.Minute + 9*time.Second).Microseconds())
	a.sync()
	if got := sharedState(t, newClient(t), prefix); got["st"] != "1" {
		t.Errorf("1s before the cooldown from the expiry ends: st %s, want open", got["st"])
	}
	a.shift.Store((2*time.Minute + 10*time.Second + 500*time.Millisecond).Microseconds())
	a.sync()
	if got := sharedState(t, newClient(t), prefix); got["st"] != "2" || got["gen"] != "5" {
		t.Errorf("after the cooldown from the expiry: gen %s st %s, want 5, half-open", got["gen"], got["st"])
	}
	p.Done(nil) // a late report counts nothing
	a.sendReport(<-a.reports)
	if got := sharedState(t, newClient(t), prefix); got["gen"] != "5" || got["st"] != "2" {
		t.Errorf("after the expired trial's late report: gen %s st %s, want 5, half-open", got["gen"], got["st"])
	}
}

// Reset closes the breaker fleet-wide.
func TestBreakerReset(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := running(t, addr, prefix, WithThreshold(1), WithCooldown(time.Hour))
	b := running(t, addr, prefix, WithThreshold(1), WithCooldown(time.Hour))
	for _, x := range []*Breaker{a, b} {
		redistest.Eventually(t, 5*time.Second, "instances learn the shared state", func() (bool, string) {
			return x.ep.Load() != 0, "no epoch"
		})
	}
	fail(a)
	redistest.Eventually(t, 5*time.Second, "B sees the trip", func() (bool, string) {
		return b.State() == breaker.Open, b.State().String()
	})
	if err := a.Reset(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 5*time.Second, "B sees the reset", func() (bool, string) {
		return b.State() == breaker.Closed, b.State().String()
	})
}

// Redis unreachable: no call waits on it longer than the timeout, and the
// local breaker decides, with the same rules.
func TestBreakerFallsBackWhenRedisIsDown(t *testing.T) {
	const timeout = 50 * time.Millisecond
	b := running(t, deadAddr(t), testPrefix(t), WithThreshold(3), WithTimeout(timeout), WithCooldown(time.Hour))
	redistest.Eventually(t, 5*time.Second, "the instance finds Redis unreachable", func() (bool, string) {
		return viewDown(b.word.Load()), "view " + strconv.FormatUint(b.word.Load(), 2)
	})
	var errs []string
	for range 5 {
		start := time.Now()
		err := fail(b)
		if d := time.Since(start); d > timeout+500*time.Millisecond {
			t.Errorf("a call took %v with Redis down, want at most Timeout (%v)", d, timeout)
		}
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			errs = append(errs, "")
		}
	}
	want := []string{"", "", "", "breaker: open (svc), retry after 1h0m0s", "breaker: open (svc), retry after 1h0m0s"}
	for i := range errs {
		if len(errs[i]) > len("breaker: open (svc)") {
			errs[i] = errs[i][:len("breaker: open (svc)")]
		}
		if len(want[i]) > len("breaker: open (svc)") {
			want[i] = want[i][:len("breaker: open (svc)")]
		}
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("calls with Redis down mismatch (-want +got):\n%s", diff)
	}
}

// An instance that has not learnt the shared state yet counts its calls
// for the current generation: a failure right after NewBreaker is not lost.
func TestBreakerCountsBeforeFirstSync(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(10))
	a.sync()
	fail(a)
	a.flush()
	b := manual(t, addr, prefix, WithThreshold(10)) // has not read the state
	fail(b)
	b.flush()
	if got := sharedState(t, newClient(t), prefix)["streak"]; got != "2" {
		t.Errorf("shared streak = %s, want 2: the new instance's failure counts", got)
	}
}

// A closed call allocates nothing: Allow, and Done counting its outcome
// into the batch.
func TestBreakerClosedCallAllocatesNothing(t *testing.T) {
	b := manual(t, redistest.Addr(t), testPrefix(t))
	b.sync()
	if n := testing.AllocsPerRun(1000, func() {
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Done(nil)
	}); n != 0 {
		t.Errorf("a closed call allocates %v times, want 0", n)
	}
	p := BreakerPolicy[int](b)
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { p.Do(ctx, op) }); n != 0 {
		t.Errorf("a closed call through BreakerPolicy allocates %v times, want 0", n)
	}
}

// A trial whose permit is never reported frees the instance's place for
// trials after TrialTimeout (as it expires fleet-wide): the instance asks
// Redis again, and learns that the expiry opened the breaker again.
func TestBreakerAbandonedTrialFreesItsPlace(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(1), WithCooldown(time.Minute), WithTrialTimeout(50*time.Millisecond))
	a.sync()
	fail(a)
	a.flush()
	a.shift.Store(time.Minute.Microseconds())
	a.sync()
	if p, err := a.Allow(); err != nil || p.member == "" {
		t.Fatalf("first call after the cooldown: %v; want a trial", err)
	} // and never reported
	redistest.Eventually(t, 5*time.Second, "the abandoned trial's place is free again", func() (bool, string) {
		_, err := a.Allow()
		return errors.Is(err, breaker.ErrOpen), "Allow: " + err.Error()
	})
}

// The slow-call ratio over the shared window: calls longer than SlowCall
// count as slow, whether they succeeded or not.
func TestBreakerSlowCallRatio(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(resilience.Off), WithSlowCall(time.Millisecond),
		WithSlowCallRatio(0.5), WithMinCalls(2), WithCooldown(time.Hour))
	a.sync()
	for range 2 {
		p, err := a.Allow()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond) // the call takes longer than SlowCall
		p.Done(nil)
	}
	a.flush()
	if s := a.State(); s != breaker.Open {
		t.Errorf("two slow successes of two calls: %v, want open", s)
	}
}

// BreakerPolicy reports outcomes as breaker.Policy does: a panic is a
// failure (and goes on), the caller's cancellation and an inner guard's
// refusal are ignored, and a done ctx is not even asked about.
func TestBreakerPolicyOutcomes(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	b := manual(t, addr, prefix, WithThreshold(100))
	b.sync()
	p := BreakerPolicy[int](b)
	if p.String() != "breaker(svc)" {
		t.Errorf("layer name %q, want breaker(svc)", p.String())
	}
	func() {
		defer func() {
			if r := recover(); r != "op panicked" {
				t.Errorf("recovered %v, want the op's panic", r)
			}
		}()
		p.Do(context.Background(), func(context.Context) (int, error) { panic("op panicked") })
	}()
	ctx, cancel := context.WithCancel(context.Background())
	p.Do(ctx, func(context.Context) (int, error) { cancel(); return 0, context.Canceled })
	p.Do(context.Background(), func(context.Context) (int, error) {
		return 0, resilience.Refuse(breaker.ErrOpen, "inner", -1)
	})
	if _, err := p.Do(ctx, func(context.Context) (int, error) { t.Error("the op ran with a done ctx"); return 0, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a call with a done ctx: %v, want context.Canceled", err)
	}
	p.Do(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	b.flush()
	if got := sharedState(t, newClient(t), prefix)["streak"]; got != "2" {
		t.Errorf("shared streak = %s, want 2: the panic and the failure, nothing else", got)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("Report of an invalid outcome did not panic")
		}
	}()
	pm, _ := b.Allow()
	pm.Report(breaker.Outcome(7))
}

package resilienceredis

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// WaitN(ctx, 0) asks nothing and takes nothing: nil, or ctx.Err() when
// ctx is done; it does not panic.
func TestLimiterWaitNZero(t *testing.T) {
	l := NewLimiter(newClient(t), "waitzero", slow, 1, WithPrefix(testPrefix(t)))
	if err := l.WaitN(ctxFor(t), 0); err != nil {
		t.Errorf("WaitN(ctx, 0) = %v, want nil", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WaitN(done, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitN(done ctx, 0) = %v, want context.Canceled", err)
	}
	if s := values(t, l.Snapshot()); s["decisions_shared"] != 0 {
		t.Errorf("WaitN(ctx, 0) made %v decisions in Redis, want 0", s["decisions_shared"])
	}
	if !l.Allow(ctxFor(t)) {
		t.Error("WaitN(ctx, 0) took the token")
	}
}

// A MaxWait of 1ns refuses any wait at all (the next token 5s away),
// and the snapshot counts the Waits Redis decided and the refusal.
func TestLimiterWaitShortestMaxWait(t *testing.T) {
	ctx := context.Background() // no deadline: MaxWait alone bounds the wait
	l := NewLimiter(newClient(t), "waitmax", 0.2, 1, WithPrefix(testPrefix(t)), WithMaxWait(time.Nanosecond), WithTimeout(5*time.Second))
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait on a full bucket: %v", err)
	}
	err := l.Wait(ctx)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) {
		t.Errorf("Wait with MaxWait 1ns on an empty bucket: %v; want a refusal at once", err)
	}
	s := l.Snapshot()
	if diff := cmp.Diff(map[string]float64{"local": 0, "decisions_shared": 2, "decisions_local": 0}, values(t, s)); diff != "" || s.Refused != 1 {
		t.Errorf("Snapshot refused %d, want 1; values mismatch (-want +got):\n%s", s.Refused, diff)
	}
}

// A Wait, or a WaitN(ctx, 2), cancelled while it waits gives its tokens
// back: the TAT is what it was before.
func TestLimiterWaitCancelledGivesBack(t *testing.T) {
	for _, n := range []int{1, 2} {
		rdb := newClient(t)
		prefix := testPrefix(t)
		l := NewLimiter(rdb, "refund", 1, n, WithPrefix(prefix), WithTimeout(5*time.Second)) // T = 1s
		key := prefix + "rl:{refund}:1/" + strconv.Itoa(n)
		before, _, cancel, done := waiting(t, l, rdb, key, n)
		cancel()
		wantGivenBack(t, l, rdb, key, before, done, "the cancelled WaitN("+strconv.Itoa(n)+")")
	}
}

// A WaitN(ctx, 2) cancelled while Redis reserves its tokens (the script
// has run, its answer is on its way) gives both back too. The stand-in
// for the round trip gives up when its context ends, as a client with
// ContextTimeoutEnabled does; it ends only after the cancellation.
func TestLimiterWaitNCancelledDuringItsRoundTripGivesBackAll(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	var armed atomic.Bool
	ran := make(chan struct{})
	release := make(chan struct{})
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if err != nil || !isScript(cmd, gcraScript) || !armed.CompareAndSwap(true, false) {
			return err
		}
		close(ran)
		<-release
		return ctx.Err() // the answer is lost if the round trip's context ended
	}))
	l := NewLimiter(rdb, "refundrt", 1, 2, WithPrefix(prefix), WithTimeout(5*time.Second))
	key := prefix + "rl:{refundrt}:1/2"
	if !l.AllowN(ctx, 2) {
		t.Fatal("first AllowN(2) refused")
	}
	before, err := rdb.Get(ctx, key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.WaitN(wctx, 2) }()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("WaitN's reservation did not run within 5s")
	}
	cancel()
	close(release)
	wantGivenBack(t, l, rdb, key, before, done, "the WaitN(2) cancelled during its round trip")
}

// isScript reports whether cmd runs s by its hash (EVALSHA).
func isScript(cmd redis.Cmder, s *redis.Script) bool {
	a := cmd.Args()
	return len(a) > 1 && a[1] == s.Hash()
}

// A cancelled Wait returns at once though Redis has not answered its
// refund yet: the refund runs in the background, and Close waits for it.
func TestLimiterWaitCancelledReturnsBeforeItsRefund(t *testing.T) {
	rdb := newClient(t)
	prefix := testPrefix(t)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if isScript(cmd, refundScript) {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		}
		return next(ctx, cmd)
	}))
	l := NewLimiter(rdb, "refundbg", 1, 1, WithPrefix(prefix), WithTimeout(5*time.Second))
	key := prefix + "rl:{refundbg}:1/1"
	before, _, cancel, done := waiting(t, l, rdb, key, 1)
	cancel()
	select {
	case err := <-done:
		done <- err
	case <-time.After(2 * time.Second):
		close(release)
		t.Fatal("the cancelled Wait did not return within 2s while its refund waited for Redis")
	}
	select {
	case <-entered:
	case <-time.After(2 * time.Second):
		close(release)
		t.Fatal("no refund asked of Redis within 2s")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		l.Close()
	}()
	select {
	case <-closed:
		t.Error("Close returned while a refund's round trip was under way")
	case <-time.After(50 * time.Millisecond): // a failure shows only if Close is wrong; a pass costs this wait
	}
	close(release)
	<-closed
	wantGivenBack(t, l, rdb, key, before, done, "the cancelled Wait")
}

// A Wait cancelled after its limiter's Close gives nothing back: after
// Close the limiter asks Redis nothing.
func TestLimiterWaitCancelledAfterCloseAsksNothing(t *testing.T) {
	rdb := newClient(t)
	prefix := testPrefix(t)
	var asked atomic.Int64
	var closedAt atomic.Bool
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if closedAt.Load() {
			asked.Add(1)
		}
		return next(ctx, cmd)
	}))
	l := NewLimiter(rdb, "refundclosed", 1, 1, WithPrefix(prefix), WithTimeout(5*time.Second))
	key := prefix + "rl:{refundclosed}:1/1"
	_, reserved, cancel, done := waiting(t, l, rdb, key, 1)
	l.Close()
	closedAt.Store(true)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait cancelled after Close: %v, want context.Canceled", err)
	}
	settled(l)
	if n := asked.Load(); n != 0 {
		t.Errorf("the limiter ran %d scripts after Close, want 0", n)
	}
	if got, err := rdb.Get(ctxFor(t), key).Float64(); err != nil || got != reserved {
		t.Errorf("TAT after the Wait cancelled after Close = %v (%v), want %v (its token spent)", got, err, reserved)
	}
}

// A wait that Redis measured within the deadline but that, once the
// answer is back, would end after it is refused at once (RetryAfter the
// wait), its tokens given back: WaitN does not sleep into the deadline.
func TestLimiterWaitRefusedWhenTheAnswerComesTooLate(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	var hold atomic.Pointer[time.Time]
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if !isScript(cmd, gcraScript) { // not the limiter's checks in the background
			return err
		}
		if until := hold.Swap(nil); until != nil {
			time.Sleep(time.Until(*until)) // the answer's slow way back
		}
		return err
	}))
	l := NewLimiter(rdb, "late", 2, 1, WithPrefix(prefix), WithTimeout(5*time.Second)) // T = 500ms
	key := prefix + "rl:{late}:2/1"
	if !l.Allow(ctx) {
		t.Fatal("first Allow refused")
	}
	before, err := rdb.Get(ctx, key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	// Redis measures a wait of up to 500ms, within the deadline; the
	// answer comes back 50ms before it. (A machine that stalls 450ms
	// between the Allow and the Wait's script would leave no wait.)
	deadline := time.Now().Add(550 * time.Millisecond)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	until := deadline.Add(-50 * time.Millisecond)
	hold.Store(&until)
	err = l.Wait(dctx)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) || re.RetryAfter() <= 50*time.Millisecond {
		t.Fatalf("Wait whose answer came back 50ms before its deadline, a wait of up to 500ms left: %v, want a refusal with RetryAfter above 50ms", err)
	}
	if got := l.Snapshot().Refused; got != 1 {
		t.Errorf("Snapshot().Refused = %d, want 1 (the late answer's refusal)", got)
	}
	settled(l)
	// Given back, the TAT is before again, or the key gone if that has
	// passed meanwhile.
	if after, err := rdb.Get(ctx, key).Float64(); err != redis.Nil && (err != nil || after != before) {
		t.Errorf("TAT after the refused Wait = %v (%v), want %v or none (its token given back)", after, err, before)
	}
}

// wantGivenBack checks that the cancelled Wait (or WaitN) of l named what
// returns context.Canceled on done within 10s, and that the TAT at key is
// before again once l's work in the background is done: its tokens are
// given back.
func wantGivenBack(t *testing.T, l *Limiter, rdb *redis.Client, key string, before float64, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v, want context.Canceled", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s of its cancellation", what)
	}
	settled(l)
	after, err := rdb.Get(ctxFor(t), key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("TAT after %s = %v, want %v (its tokens given back)", what, after, before)
	}
}

// settled waits for the work that l started in the background (the
// refunds of cancelled Waits, their reservations' round trips) to end.
// Nothing else may start such work meanwhile.
func settled(l *Limiter) { l.p.remote.wg.Wait() }

// The caller's deadline still bounds a Wait's reservation round trip (a
// cancellation does not cut it short; a deadline does): with Redis's
// answer held back and a Timeout of a minute, a Wait with a 100ms deadline
// returns context.DeadlineExceeded within 2s.
func TestLimiterWaitDeadlineBoundsItsRoundTrip(t *testing.T) {
	rdb := newClient(t)
	release := make(chan struct{})
	var armed atomic.Bool
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if armed.Load() {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return next(ctx, cmd)
	}))
	l := NewLimiter(rdb, "rtdeadline", 1, 1, WithPrefix(testPrefix(t)), WithTimeout(time.Minute))
	defer func() {
		armed.Store(false)
		close(release) // before Close, which waits for the round trip
		l.Close()
	}()
	armed.Store(true)
	dctx, cancel := context.WithTimeout(ctxFor(t), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Wait(dctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait whose deadline passed while Redis held its answer: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Wait did not return within 2s of its 100ms deadline while Redis held its answer")
	}
}

// waiting empties the bucket of l at key (of burst n), starts a WaitN(n)
// of l under a context whose cancel it returns, and returns once Redis has
// reserved its tokens: the bucket's TAT before and after the reservation,
// and the channel of WaitN's result.
func waiting(t *testing.T, l *Limiter, rdb *redis.Client, key string, n int) (before, reserved float64, cancel context.CancelFunc, done chan error) {
	t.Helper()
	ctx := ctxFor(t)
	if !l.AllowN(ctx, n) {
		t.Fatalf("first AllowN(%d) refused", n)
	}
	before, err := rdb.Get(ctx, key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	done = make(chan error, 1)
	go func() { done <- l.WaitN(wctx, n) }()
	redistest.Eventually(t, 5*time.Second, "the WaitN reserves its tokens", func() (bool, string) {
		v, err := rdb.Get(ctx, key).Float64()
		reserved = v
		return err == nil && v > before, "TAT " + strconv.FormatFloat(v, 'f', -1, 64)
	})
	return before, reserved, cancel, done
}

package browsertest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/dashboard"
	"github.com/f0b5b96b/resilience/internal/dashdemo"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/telemetry"
)

var screenshot = flag.String("screenshot", "", "where to save the screenshot taken during the outage (the README's is ../../docs/dashboard.png); empty: the test's temporary directory")

// phase is the length of each phase of the scenario's outage.
const phase = 3 * time.Second

// chromium returns the path of the browser, or fails t saying how to get it.
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("no chromium found (/usr/bin/chromium): install it with apt-get install -y chromium (.ci/run does)")
	return ""
}

// browser starts headless Chromium, as root can run it, and returns a
// context for one tab. It ends with the test.
func browser(t *testing.T) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // root has no sandbox
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 760),
	)
	// Every call to the browser ends by this deadline: past it the
	// browser is stopped and the calls fail, naming what they waited for.
	bound, cancelBound := context.WithTimeout(context.Background(), 5*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(bound, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		cancelBound()
	})
	return tab
}

// serve serves h on addr (a loopback address, port 0 for any) and returns
// the server; its streams end when it is closed.
func serve(t *testing.T, addr string, h http.Handler) (*http.Server, string) {
	t.Helper()
	var ln net.Listener
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for { // the port of a server just closed may take a moment to be free
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// console collects what the page writes to the console.
type console struct {
	mu       sync.Mutex
	messages []string // the errors, and where the test was when they came
	where    string
}

func (c *console) watch(tab context.Context) {
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException {
				continue
			}
			c.mu.Lock()
			// While the server is down, the browser logs the stream's
			// failed connections: those are expected there only.
			if !(c.where == "server down" && m.Source == "network") {
				c.messages = append(c.messages, fmt.Sprintf("%s (%s, source %q, %s:%d)", m.Text, c.where, m.Source, m.URL, m.Line))
			}
			c.mu.Unlock()
		}
	}()
}

func (c *console) at(where string) {
	c.mu.Lock()
	c.where = where
	c.mu.Unlock()
}

func (c *console) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.messages) > 0 {
		t.Errorf("the page wrote %d errors to the console:\n%s", len(c.messages), strings.Join(c.messages, "\n"))
	}
}

// waitFor polls the JavaScript condition cond in the page until it holds
// or d has passed, and fails t naming what it did not see (with the value
// of show, a JavaScript expression, at that moment).
func waitFor(t *testing.T, tab context.Context, d time.Duration, what, cond, show string) time.Duration {
	t.Helper()
	start := time.Now()
	_, err := chromedp.Run(tab, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		seen, _ := chromedp.Run(tab, chromedp.Evaluate[string](`JSON.stringify(`+show+`)`))
		t.Fatalf("did not see %s within %v (%v); the page showed: %s", what, d, err, seen)
	}
	return time.Since(start)
}

func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// tileState is the state the page shows on the tile of name.
func tileState(name string) string {
	return fmt.Sprintf(`(document.querySelector('.tile[data-name=%q]') || {dataset: {state: 'no tile'}}).dataset.state`, name)
}

// ratesUnknown lists the rates the page shows as "–" (none known) or
// "n/a" (no source), tile by tile and pipeline by pipeline.
const ratesUnknown = `[...[...document.querySelectorAll('.tile')].flatMap(e => [...e.querySelectorAll('b.calls, b.ref')].map(b => [e.dataset.name + ' ' + b.className, b.textContent])),
	 ...[...document.querySelectorAll('#pipelines tbody tr')].flatMap(r => [...r.querySelectorAll('td.num')].map(td => ['pipeline ' + r.dataset.name, td.textContent]))]
	.filter(([, text]) => text === '–' || text === 'n/a').map(([where]) => where)`

const tilesShown = `[...document.querySelectorAll('.tile')].map(e => e.dataset.name + ': ' + e.dataset.state)`

// nextPhase waits for the scenario to reach phase p and returns when.
func nextPhase(t *testing.T, phases <-chan dashdemo.Phase, p dashdemo.Phase) time.Time {
	t.Helper()
	timeout := time.After(4*phase + 10*time.Second)
	for {
		select {
		case got := <-phases:
			if got == p {
				return time.Now()
			}
		case <-timeout:
			t.Fatalf("the scenario did not reach the %s phase", p)
		}
	}
}

// The page over examples/dashboard's scenario: a tile per guard, the
// prices tile turning open within 2 s of the outage and closed again after
// the recovery, the stream reconnecting after the server restarts, no
// console errors; a screenshot during the outage.
func TestBrowser(t *testing.T) {
	demo, err := dashdemo.New(dashdemo.Config{Phase: phase})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	ctx, stop := context.WithCancel(context.Background())
	phases := make(chan dashdemo.Phase, 64)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		demo.Run(ctx, func(p dashdemo.Phase) { phases <- p })
	}()
	defer func() {
		stop()
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Error("the scenario did not stop within 10s")
		}
	}()

	start := time.Now()
	srv, addr := serve(t, "127.0.0.1:0", demo.Dashboard)
	tab := browser(t)
	var cons console
	cons.at("page load")
	cons.watch(tab)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}

	// A tile per registered guard. (Updates may already have come: the
	// demo runs on the real clock. That the first frame alone shows every
	// tile is pinned on a fake clock, in TestBrowserGuardKinds.)
	var want []string
	for _, s := range demo.Registry.Snapshots() {
		want = append(want, s.Name)
	}
	waitFor(t, tab, 10*time.Second, fmt.Sprintf("a tile for each of the %d guards %v", len(want), want),
		fmt.Sprintf(`document.querySelectorAll('.tile').length === %d && document.getElementById('status').dataset.status === 'live'`, len(want)), tilesShown)
	got := eval[[]string](t, tab, `[...document.querySelectorAll('.tile')].map(e => e.dataset.name)`)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("tiles for %v, want one for each guard %v", got, want)
	}
	// The first frame is complete (or the one after it, if an update came
	// in between: TestBrowserGuardKinds pins the first on a fake clock): a
	// number for every rate, and a scale on every sparkline (every tile
	// here has a Measure layer, and the dashboard a Counter).
	if dashes := eval[[]string](t, tab, ratesUnknown); len(dashes) > 0 {
		t.Errorf("the first frame shows no rate for %q", dashes)
	}
	if bad := eval[[]string](t, tab, `[...document.querySelectorAll('.tile')].filter(e => !/^\d+(\.\d)?\/s$/.test(e.querySelector('.scale').textContent)).map(e => e.dataset.name + ': ' + JSON.stringify(e.querySelector('.scale').textContent))`); len(bad) > 0 {
		t.Errorf("sparklines without a scale (want the rate at their top, as 25/s): %q", bad)
	}
	if s := eval[string](t, tab, tileState("recommendations")); s != "forced-open" {
		t.Errorf("the tile of the breaker forced open shows %q, want forced-open", s)
	}
	cons.at("outage")

	// The outage: the prices tile turns open within 2 s of its start.
	failing := nextPhase(t, phases, dashdemo.Failing)
	waitFor(t, tab, time.Until(failing.Add(2*time.Second)), "the prices tile turn open within 2s of the outage's start",
		tileState("prices")+` === 'open'`, tilesShown)
	t.Logf("the prices tile turned open %v after the outage started", time.Since(failing).Round(time.Millisecond))

	// The recovery: closed again.
	recovered := nextPhase(t, phases, dashdemo.Recovered)
	waitFor(t, tab, 10*time.Second, "the prices tile turn closed within 10s of the recovery", tileState("prices")+` === 'closed'`, tilesShown)
	t.Logf("the prices tile turned closed %v after the recovery started", time.Since(recovered).Round(time.Millisecond))

	// The server restarts on the same port: the stream reconnects.
	connects := eval[int](t, tab, `window.dashboard.stats.snapshots`)
	cons.at("server down")
	if err := srv.Close(); err != nil {
		t.Fatalf("closing the server: %v", err)
	}
	waitFor(t, tab, 5*time.Second, "the page notice that the stream dropped", `document.getElementById('status').dataset.status !== 'live'`,
		`document.getElementById('status').dataset.status`)
	_, _ = serve(t, addr, demo.Dashboard)
	waitFor(t, tab, 15*time.Second, "the stream reconnect after the server restarted on the same port",
		fmt.Sprintf(`window.dashboard.stats.snapshots > %d && window.dashboard.stats.updates > 0 && document.getElementById('status').dataset.status === 'live'`, connects),
		`[document.getElementById('status').dataset.status, window.dashboard.stats]`)
	cons.at("after the restart")
	seq := eval[int](t, tab, `window.dashboard.stats.lastSeq`)
	waitFor(t, tab, 5*time.Second, "updates after the reconnection", fmt.Sprintf(`window.dashboard.stats.lastSeq > %d`, seq), `window.dashboard.stats`)

	// The next outage, for the screenshot: the prices tile open, with the
	// first outage and recovery in its sparkline. For the README's
	// (-screenshot), an outage after the sparklines have filled up.
	failing = nextPhase(t, phases, dashdemo.Failing)
	for *screenshot != "" && time.Since(start) < 100*time.Second {
		failing = nextPhase(t, phases, dashdemo.Failing)
	}
	waitFor(t, tab, time.Until(failing.Add(2*time.Second)), "the prices tile turn open within 2s of the second outage's start",
		tileState("prices")+` === 'open'`, tilesShown)
	shot := time.Until(failing.Add(2500 * time.Millisecond))
	waitFor(t, tab, shot+2*time.Second, "two updates into the outage with the prices tile open",
		fmt.Sprintf(`window.dashboard.stats.lastSeq >= %d && %s === 'open'`, eval[int](t, tab, `window.dashboard.stats.lastSeq`)+2, tileState("prices")), tilesShown)
	png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := *screenshot
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard.png")
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the outage: %s (%d bytes)", path, len(png))
	cons.check(t)
}

// The page with 5 000 guards: it applies a snapshot of them all and keeps
// up with the updates. The times are reported (go test -v), not asserted.
func TestBrowserThousands(t *testing.T) {
	const n = 5000
	f := clock.Real()
	reg := telemetry.NewRegistry()
	var events telemetry.Counter
	dash := dashboard.New(reg, &dashboard.Options{Counter: &events, Clock: f})
	breakers := make([]*breaker.Breaker, n)
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("dependency-%04d", i)
		b := breaker.New(breaker.WithName(name), breaker.WithObserver(&events))
		if i%97 == 0 {
			b.ForceOpen()
		}
		breakers[i] = b
		if err := reg.Register(b); err != nil {
			t.Fatal(err)
		}
		m := dashboard.Measure[int](dash, name)
		for j := range 3 {
			_, _ = m.Do(ctx, func(context.Context) (int, error) {
				if j == 2 && i%3 == 0 {
					return 0, errors.New("boom")
				}
				return 1, nil
			})
		}
	}
	_, addr := serve(t, "127.0.0.1:0", dash)
	tab := browser(t)
	var cons console
	cons.at("5 000 guards")
	cons.watch(tab)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	// Long tasks: the page's main thread busy for more than 50 ms.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](`window.longTasks = [];
		new PerformanceObserver(l => { for (const e of l.getEntries()) window.longTasks.push(e.duration); }).observe({type: 'longtask'}); 0`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, 60*time.Second, fmt.Sprintf("%d tiles", n), fmt.Sprintf(`window.dashboard.stats.tiles === %d`, n), `window.dashboard.stats`)
	full := eval[float64](t, tab, `window.dashboard.stats.fullApplyMs`)
	seq := eval[int](t, tab, `window.dashboard.stats.lastSeq`)
	waitFor(t, tab, 20*time.Second, "three updates of the 5 000 tiles", fmt.Sprintf(`window.dashboard.stats.lastSeq >= %d`, seq+3), `window.dashboard.stats`)
	update := eval[float64](t, tab, `window.dashboard.stats.updateApplyMs`)
	frame := eval[float64](t, tab, `window.dashboard.stats.lastFrameMs`)

	// Breakers open: their tiles move to the front.
	for i := 1; i < n; i += 500 {
		breakers[i].ForceOpen()
	}
	seq = eval[int](t, tab, `window.dashboard.stats.lastSeq`)
	waitFor(t, tab, 20*time.Second, "the tiles of the breakers just opened first", fmt.Sprintf(
		`window.dashboard.stats.lastSeq > %d && document.querySelector('#tiles .tile:nth-child(2)').dataset.name === 'dependency-0001'`, seq+1),
		`[...document.querySelectorAll('#tiles .tile')].slice(0, 3).map(e => e.dataset.name)`)
	reorder := eval[float64](t, tab, `window.dashboard.stats.lastApplyMs`)
	longTasks := eval[[]float64](t, tab, `window.longTasks`)
	recent := eval[[][]float64](t, tab, `window.dashboard.stats.recent`)
	t.Logf("the last events' [parse, apply, next frame] ms: %v", recent)
	t.Logf("%d tiles: first snapshot applied in %.1f ms (tiles made); an update in %.1f ms (%.1f ms to the next frame, layout and paint included); an update that moves %d tiles to the front in %.1f ms; %d long tasks (> 50 ms) %v ms",
		n, full, update, frame, (n+499)/500, reorder, len(longTasks), longTasks)
	if ord := eval[[]string](t, tab, `[...document.querySelectorAll('#tiles .tile')].slice(0, 2).map(e => e.dataset.state)`); ord[0] != "forced-open" || ord[1] != "forced-open" {
		t.Errorf("the first tiles are %v, want open breakers first", ord)
	}
	cons.check(t)
}

// fakeGuard is a guard of one's own, of a fixed snapshot.
type fakeGuard struct{ s telemetry.Snapshot }

func (g fakeGuard) Name() string                 { return g.s.Name }
func (g fakeGuard) Snapshot() telemetry.Snapshot { return g.s }

// One guard of each core kind, and one of a user's own, each rendered
// from what it describes: a tile per name, a row per guard.
func TestBrowserGuardKinds(t *testing.T) {
	f := clock.NewFake()
	reg := telemetry.NewRegistry()
	bh := bulkhead.New(10, bulkhead.WithName("db"))
	for range 3 {
		if !bh.TryAcquire() {
			t.Fatal("TryAcquire = false on an idle bulkhead")
		}
	}
	hosts := breaker.NewKeyed[string](breaker.WithName("hosts"), breaker.WithThreshold(1))
	hosts.Breaker("a.example").Record(true) // open
	if _, err := hosts.Breaker("a.example").Allow(); err == nil {
		t.Fatal("an open breaker admitted a call")
	}
	hosts.Breaker("b.example")
	// A breaker open for 12 s of its 30 s cooldown.
	pay := breaker.New(breaker.WithName("pay"), breaker.WithThreshold(1), breaker.WithCooldown(30*time.Second), breaker.WithClock(f))
	pay.Record(true)
	f.Advance(12 * time.Second)
	// The dashboard's clock is a fake that stays put from now: the stream
	// sends its first snapshot and no update, so the page shows its first
	// frame, with the rates over an Interval.
	dash := dashboard.New(reg, &dashboard.Options{Clock: f})
	// Calls through a Measure layer: a sparkline, with its scale.
	m := dashboard.Measure[int](dash, "db")
	for range 5 {
		_, _ = m.Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	}
	users := ratelimit.NewKeyed[string](1, 1, ratelimit.WithName("users"))
	users.Allow("u1")
	users.Allow("u1") // refused
	for _, g := range []telemetry.Guard{
		breaker.New(breaker.WithName("db")),
		pay,
		bh,
		ratelimit.New(100, 10, ratelimit.WithName("db")),
		hosts,
		users,
		adaptive.New(adaptive.WithName("search")),
		throttle.New(throttle.WithName("api")),
		fakeGuard{telemetry.Snapshot{Kind: "mycache", Name: "cache", State: telemetry.StateOpen, Refused: 2,
			Values: []telemetry.Value{{Name: "entries", Unit: "{entry}", Help: "Entries cached.", Value: 12}}}},
		// A fleet guard whose store is unreachable, limiting on its own:
		// its state shown as it gives it.
		fakeGuard{telemetry.Snapshot{Kind: "fleetlimit", Name: "quota", State: "local",
			Values: []telemetry.Value{{Name: "shared", Unit: "1", Help: "1 while the limit is shared through the store.", Value: 0}}}},
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	_, addr := serve(t, "127.0.0.1:0", dash)
	tab := browser(t)
	var cons console
	cons.at("guard kinds")
	cons.watch(tab)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	waitFor(t, tab, 10*time.Second, "eight tiles", `document.querySelectorAll('.tile').length === 8`, tilesShown)
	if s := eval[[]int](t, tab, `[window.dashboard.stats.snapshots, window.dashboard.stats.updates]`); !slices.Equal(s, []int{1, 0}) {
		t.Fatalf("the page had %d snapshots and %d updates, want its first frame: 1, 0", s[0], s[1])
	}
	// The first frame: every rate known, but the calls of the names
	// without a Measure layer (all but db): "n/a", no source.
	if got := eval[[]string](t, tab, `[...document.querySelectorAll('.tile')].map(e => e.dataset.name + ' ' + e.querySelector('b.calls').textContent + ' ' + e.querySelector('b.ref').textContent).sort()`); !slices.Equal(got, []string{
		"api n/a 0", "cache n/a 2", "db 5 0", "hosts n/a 1", "pay n/a 0", "quota n/a 0", "search n/a 0", "users n/a 1"}) {
		t.Errorf("the first frame's [tile calls/s refused/s] are %q", got)
	}
	rows := func(name string) []string {
		return eval[[]string](t, tab, fmt.Sprintf(`(() => { const e = document.querySelector('.tile[data-name=%q]');
			if (!e) return ['no tile'];
			return [e.dataset.state, e.querySelector('.badge').textContent,
				...[...e.querySelectorAll('.row.guard')].filter(r => !r.hidden).map(r => r.dataset.kind)]; })()`, name))
	}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"db", []string{"closed", "closed", "breaker", "bulkhead", "ratelimit"}},
		{"hosts", []string{"none", "breaker", "breaker"}},
		{"users", []string{"none", "ratelimit", "ratelimit"}},
		{"search", []string{"none", "adaptive", "adaptive"}},
		{"api", []string{"none", "throttle", "throttle"}},
		{"cache", []string{"open", "open", "mycache"}},
		{"pay", []string{"open", "open", "breaker"}},
		{"quota", []string{"local", "local", "fleetlimit"}},
	} {
		if got := rows(c.name); !slices.Equal(got, c.want) {
			t.Errorf("tile %s shows [state, badge, row kinds...] %q, want %q", c.name, got, c.want)
		}
	}
	text := func(name, kind string) string {
		return eval[string](t, tab, fmt.Sprintf(`[...document.querySelectorAll('.tile[data-name=%q] .row.guard')].find(r => r.dataset.kind === %q).textContent`, name, kind))
	}
	for _, c := range []struct{ name, kind, want string }{
		{"db", "breaker", "breaker closed · window calls 0 · window failures 0 · failure ratio 0"},
		{"db", "bulkhead", "bulkhead · limit 10 · in flight 3 · queued 0"},
		{"db", "ratelimit", "ratelimit · rate 100/s · burst 10 · tokens 10"},
		{"hosts", "breaker", "breaker (2 keys) · keys 2 · max keys 8192 · open keys 1"},
		{"cache", "mycache", "mycache open · entries 12"},
		{"pay", "breaker", "breaker open · window calls 0 · window failures 0 · failure ratio 0"},
		{"quota", "fleetlimit", "fleetlimit local · shared 0"},
	} {
		if got := text(c.name, c.kind); got != c.want {
			t.Errorf("tile %s's %s row reads %q, want %q", c.name, c.kind, got, c.want)
		}
	}
	// Each guard's second and third lines: its durations out of a closed
	// state (the open breaker's open for, cooldown left), a keyed guard's
	// top keys (key, state, refusals).
	lines := func(name string) []string {
		return eval[[]string](t, tab, fmt.Sprintf(`[...document.querySelectorAll('.tile[data-name=%q] .row.timers, .tile[data-name=%q] .row.keys')].filter(r => !r.hidden).map(r => r.className + ': ' + r.textContent)`, name, name))
	}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"pay", []string{"row timers: open for 12 s · cooldown left 18 s"}},
		{"hosts", []string{"row keys: top keys: a.example open 1 refused"}},
		{"users", []string{"row keys: top keys: u1 1 refused"}},
		{"db", nil},
		{"cache", nil},
	} {
		if got := lines(c.name); !slices.Equal(got, c.want) {
			t.Errorf("tile %s's lines of durations and keys are %q, want %q", c.name, got, c.want)
		}
	}
	if got := eval[string](t, tab, `document.querySelector('.tile[data-name="users"] .row.guard').title`); !strings.Contains(got, "top keys: u1 1 refused") {
		t.Errorf("the users row's title is %q, want it to name the top key u1", got)
	}
	// The scale of a sparkline: the rate at its top; none without one.
	scales := eval[[]string](t, tab, `[...document.querySelectorAll('.tile')].map(e => e.dataset.name + ' ' + e.querySelector('.scale').textContent).sort()`)
	if want := []string{"api ", "cache ", "db 5/s", "hosts ", "pay ", "quota ", "search ", "users "}; !slices.Equal(scales, want) {
		t.Errorf("sparkline scales %q, want %q", scales, want)
	}
	cons.check(t)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// fastRun is the state of the schema path for one package: the schema test
// binary, the coverage per test, and the mutants compiled in.
type fastRun struct {
	bin     string             // the schema test binary
	in      map[int]bool       // mutant numbers compiled into bin
	left    map[int]string     // the others, with the reason
	tests   map[string][]block // per test: the blocks it runs (count > 0)
	names   []string           // every listed test, in -test.list order
	perTest bool               // false: run every test for every mutant
	pkgDir  string
	build   time.Duration // how long the schema binary took to build
}

// prepareFast builds the schema binary and the coverage binary, checks the
// baseline and learns the coverage of each test. A non-nil error means the
// package falls back to the per-mutant path (the error says why). The
// returned baseline coverage and time replace the go test baseline.
func prepareFast(ctx context.Context, c config, ms []mutant, ids []int, tmp, modRoot, pkgDir, pkgArg string) (*fastRun, map[string][]block, time.Duration, error) {
	pt, err := loadTypes(modRoot, pkgArg)
	if err != nil {
		return nil, nil, 0, err
	}
	sc, err := buildSchema(pt, ms, ids)
	if err != nil {
		return nil, nil, 0, err
	}
	fr := &fastRun{in: sc.in, left: sc.left, pkgDir: pkgDir}
	// Overlay: the schema files and the guard helper.
	repl := map[string]string{}
	for path, src := range sc.files {
		p := filepath.Join(tmp, "schema_"+filepath.Base(path))
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return nil, nil, 0, err
		}
		repl[path] = p
	}
	hp := filepath.Join(tmp, helperName)
	if err := os.WriteFile(hp, sc.helper, 0o644); err != nil {
		return nil, nil, 0, err
	}
	repl[filepath.Join(pt.dir, helperName)] = hp
	js, _ := json.Marshal(map[string]map[string]string{"Replace": repl})
	overlay := filepath.Join(tmp, "schema-overlay.json")
	if err := os.WriteFile(overlay, js, 0o644); err != nil {
		return nil, nil, 0, err
	}
	fr.bin = filepath.Join(tmp, "schema.test")
	t0 := time.Now()
	res := runCmd(ctx, modRoot, nil, []string{"go", "test", "-c", "-vet=off", "-overlay=" + overlay, "-o", fr.bin, pkgArg}, 30*time.Minute)
	fr.build = time.Since(t0)
	if res.err != nil {
		return nil, nil, 0, fmt.Errorf("schema build: %v\n%s", res.err, res.out)
	}
	cov := filepath.Join(tmp, "cover.test")
	res = runCmd(ctx, modRoot, nil, []string{"go", "test", "-c", "-vet=off", "-cover", "-covermode=set", "-o", cov, pkgArg}, 30*time.Minute)
	if res.err != nil {
		return nil, nil, 0, fmt.Errorf("coverage build: %v\n%s", res.err, res.out)
	}
	// Baseline coverage: every test, on the unmutated package.
	profile := filepath.Join(tmp, "cover.out")
	res = runCmd(ctx, pkgDir, nil, testArgs(c, cov, c.run, 30*time.Minute, "-test.coverprofile="+profile), 30*time.Minute)
	if ctx.Err() != nil {
		return nil, nil, 0, errInterrupted
	}
	if res.err != nil {
		return nil, nil, 0, errBaseline{res.out}
	}
	base, err := readCover(profile)
	if err != nil {
		return nil, nil, 0, err
	}
	// Baseline of the schema binary, no mutant active: it must pass, and
	// its time sets the timeout.
	start := time.Now()
	res = runCmd(ctx, pkgDir, nil, testArgs(c, fr.bin, c.run, 30*time.Minute), 30*time.Minute)
	baseline := time.Since(start)
	if ctx.Err() != nil {
		return nil, nil, 0, errInterrupted
	}
	if res.err != nil {
		return nil, nil, 0, fmt.Errorf("the schema binary fails its tests with no mutant active:\n%s", res.out)
	}
	fr.learnTests(ctx, c, cov, tmp, time.Duration(c.factor*float64(baseline))+c.slack)
	return fr, base, baseline, nil
}

// errBaseline: the package's tests fail unmutated.
type errBaseline struct{ out []byte }

func (e errBaseline) Error() string {
	return "baseline tests fail on the unmutated tree:\n" + string(e.out)
}

// testArgs is a test binary's command line as go test would run it.
func testArgs(c config, bin, run string, timeout time.Duration, extra ...string) []string {
	args := []string{bin, "-test.paniconexit0", "-test.count=1", "-test.timeout=" + timeout.String()}
	if run != "" {
		args = append(args, "-test.run="+run)
	}
	return append(args, extra...)
}

// learnTests lists the tests and runs each alone with a coverage profile.
// On any failure every mutant runs every test.
func (fr *fastRun) learnTests(ctx context.Context, c config, cov, tmp string, timeout time.Duration) {
	if c.run != "" {
		fmt.Println("mutate: -run given: every mutant runs the tests it selects")
		return
	}
	res := runCmd(ctx, fr.pkgDir, nil, []string{cov, "-test.list", ".*"}, timeout)
	if res.err != nil {
		fmt.Printf("mutate: cannot list the tests (%v): every mutant runs every test\n", res.err)
		return
	}
	for _, l := range strings.Split(string(res.out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Benchmark") {
			fr.names = append(fr.names, l)
		}
	}
	fr.tests = map[string][]block{}
	var mu sync.Mutex
	failed := ""
	parallel(c.p, len(fr.names), func(i int) {
		name := fr.names[i]
		prof := filepath.Join(tmp, fmt.Sprintf("test%d.cover", i))
		r := runCmd(ctx, fr.pkgDir, nil, testArgs(c, cov, "^"+regexp.QuoteMeta(name)+"$", 2*timeout+time.Minute, "-test.coverprofile="+prof), timeout)
		var bs []block
		var err error
		if r.err == nil {
			var cv map[string][]block
			if cv, err = readCover(prof); err == nil {
				for file, fbs := range cv {
					for _, b := range fbs {
						if b.count > 0 {
							b.file = file
							bs = append(bs, b)
						}
					}
				}
			}
		} else {
			err = r.err
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil && failed == "" {
			failed = name + ": " + err.Error()
		}
		fr.tests[name] = bs
	})
	if failed != "" {
		fmt.Printf("mutate: a test fails alone with coverage (%s): every mutant runs every test\n", failed)
		fr.tests, fr.names = nil, nil
		return
	}
	fr.perTest = true
}

// selectTests returns the -test.run pattern for the mutant: the tests that
// run its line, or "" for every test.
func (fr *fastRun) selectTests(c config, m mutant) string {
	if !fr.perTest {
		return c.run
	}
	base := filepath.Base(m.file)
	var names []string
	for _, n := range fr.names {
		for _, b := range fr.tests[n] {
			if b.file == base && inBlock(b, m) {
				names = append(names, regexp.QuoteMeta(n))
				break
			}
		}
	}
	if len(names) == 0 {
		// The baseline ran the line but no test alone did (or the line is
		// in no block, like a package-level initializer): every test.
		return ""
	}
	sort.Strings(names)
	return "^(" + strings.Join(names, "|") + ")$"
}

// runSchemaMutant runs the schema binary with mutant id active.
func (fr *fastRun) runSchemaMutant(ctx context.Context, c config, m mutant, id int, timeout time.Duration) outcome {
	args := testArgs(c, fr.bin, fr.selectTests(c, m), 2*timeout+time.Minute, "-test.failfast")
	env := append(os.Environ(), envID+"="+itoa(id))
	res := runTests(ctx, fr.pkgDir, env, args, timeout)
	switch {
	case res.timedOut, bytes.Contains(res.out, []byte("panic: test timed out")):
		return timedOut
	case res.err == nil:
		return survived
	}
	return killed
}

// parallel calls f(0..n-1) on at most p goroutines.
func parallel(p, n int, f func(i int)) {
	if p < 1 {
		p = 1
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

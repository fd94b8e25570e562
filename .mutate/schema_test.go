package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runProg runs a built program with an environment and returns its output,
// exit status and whether it hung (bounded at 2 s).
func runProg(t *testing.T, bin string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "hang"
	}
	s := string(out)
	if err != nil {
		// A panic's trace names schema lines; keep its message only.
		if i := strings.Index(s, "\ngoroutine "); i >= 0 {
			s = s[:i]
		}
		s += "\nexit: " + err.Error()
	}
	return s
}

func goBuild(t *testing.T, dir, overlay, out string) error {
	t.Helper()
	args := []string{"build", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return &exec.ExitError{Stderr: b}
	}
	return nil
}

func writeOverlay(t *testing.T, path string, repl map[string]string) {
	t.Helper()
	js, _ := json.Marshal(map[string]map[string]string{"Replace": repl})
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaMatchesOneMutantBuilds builds testdata/schema once with every
// mutant of lib.go compiled in, then checks, mutant by mutant, that the
// schema binary run with MUTATE_ID=n prints what the program built with
// that one mutant applied prints (nested mutants included), that the
// baseline (no MUTATE_ID) prints the original output, and that constant
// contexts and mutants that do not compile stay out of the schema.
func TestSchemaMatchesOneMutantBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds one program a mutant")
	}
	dir, err := filepath.Abs("testdata/schema")
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "lib.go")
	src, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := generate(lib, "lib.go", src)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(ms))
	for i := range ids {
		ids[i] = i
	}
	pt, err := loadTypes(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := buildSchema(pt, ms, ids)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	schemaLib := filepath.Join(tmp, "schema_lib.go")
	helper := filepath.Join(tmp, helperName)
	if err := os.WriteFile(schemaLib, sc.files[lib], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, sc.helper, 0o644); err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "schema.json")
	writeOverlay(t, ov, map[string]string{lib: schemaLib, filepath.Join(dir, helperName): helper})
	sbin := filepath.Join(tmp, "schema.bin")
	if err := goBuild(t, dir, ov, sbin); err != nil {
		t.Fatalf("schema build: %s\n%s", err.(*exec.ExitError).Stderr, sc.files[lib])
	}
	obin := filepath.Join(tmp, "orig.bin")
	if err := goBuild(t, dir, "", obin); err != nil {
		t.Fatal(err)
	}
	if got, want := runProg(t, sbin), runProg(t, obin); got != want {
		t.Fatalf("schema baseline output differs:\n got %q\nwant %q", got, want)
	}

	mustOut := map[string]bool{ // constant contexts
		`lib.go:8:14 const 1 -> 0`:      true,
		`lib.go:10:17 arith "+" -> "-"`: true,
		`lib.go:10:19 const 1 -> 0`:     true,
		// and one that go vet rejects
		`lib.go:92:16 logical "&&" -> "||"`: true,
		`lib.go:97:19 const 1 -> 0`:         true, // in a float -1: -0.0 is not 0
	}
	mustIn := map[string]bool{ // nested: "+" inside "<" inside the if condition
		`lib.go:25:5 negate negate if condition`: true,
		`lib.go:25:6 arith "+" -> "-"`:           true,
		`lib.go:25:9 boundary "<" -> "<="`:       true,
		`lib.go:25:9 negate "<" -> ">="`:         true,
		`lib.go:25:11 const 1 -> 0`:              true,
		`lib.go:25:13 logical "&&" -> "||"`:      true,
		`lib.go:25:16 not remove "!"`:            true,
		`lib.go:28:14 const 1 -> 0`:              true,
		`lib.go:34:3 remove remove "c++"`:        true,
		`lib.go:34:4 incdec "++" -> "--"`:        true,
		`lib.go:75:2 remove remove "c.hits++"`:   true,
		`lib.go:75:8 incdec "++" -> "--"`:        true,
		`lib.go:33:22 incdec "++" -> "--"`:       true, // a for loop's post statement
		`lib.go:98:15 const 1 -> 0`:              true, // in an integer -1
	}
	seen := map[string]bool{}
	inSchema := 0
	for i, m := range ms {
		k := m.key()
		seen[k] = true
		if mustOut[k] && sc.in[i] {
			t.Errorf("%s: in the schema, want it left out", k)
		}
		if mustIn[k] && !sc.in[i] {
			t.Errorf("%s: left out of the schema (%s), want it in", k, sc.left[i])
		}
		mf := filepath.Join(tmp, "m.go")
		if err := os.WriteFile(mf, m.apply(src), 0o644); err != nil {
			t.Fatal(err)
		}
		mov := filepath.Join(tmp, "m.json")
		writeOverlay(t, mov, map[string]string{lib: mf})
		mbin := filepath.Join(tmp, "m.bin")
		os.Remove(mbin)
		if err := goBuild(t, dir, mov, mbin); err != nil {
			if sc.in[i] {
				t.Errorf("%s: does not compile alone, but is in the schema", k)
			}
			continue
		}
		if !sc.in[i] {
			t.Logf("%s: left out: %s", k, sc.left[i])
			if sc.left[i] == "" {
				t.Errorf("%s: neither in the schema nor left out with a reason", k)
			}
			continue
		}
		inSchema++
		want := runProg(t, mbin)
		got := runProg(t, sbin, envID+"="+itoa(i))
		if got != want {
			t.Errorf("%s (MUTATE_ID=%d): schema output differs from the one-mutant build:\n got %q\nwant %q", k, i, got, want)
		}
	}
	for k := range mustIn {
		if !seen[k] {
			t.Errorf("no mutant %s", k)
		}
	}
	for k := range mustOut {
		if !seen[k] {
			t.Errorf("no mutant %s", k)
		}
	}
	if inSchema < len(ms)*3/4 {
		t.Errorf("%d of %d mutants compared in the schema, want most", inSchema, len(ms))
	}
	t.Logf("%d of %d mutants compared in the schema", inSchema, len(ms))
}

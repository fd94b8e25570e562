package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadEquivMergesPackageFiles(t *testing.T) {
	top := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(top, ".mutate", "equivalent"), 0o755))
	must(os.WriteFile(filepath.Join(top, ".mutate", "equivalent.txt"), []byte("# header\na.go:1:1 const 0 -> 1 # why\n"), 0o644))
	must(os.WriteFile(filepath.Join(top, ".mutate", "equivalent", "pkg.txt"), []byte("b.go:2:3 not remove \"!\" # why\n\n"), 0o644))
	eq, err := readEquiv("", top)
	must(err)
	for _, k := range []string{"a.go:1:1 const 0 -> 1", `b.go:2:3 not remove "!"`} {
		if !eq[k] {
			t.Errorf("readEquiv: %q missing from %v", k, eq)
		}
	}
	if len(eq) != 2 {
		t.Errorf("readEquiv: %d keys, want 2: %v", len(eq), eq)
	}
	// An explicit -equiv file is the only one read.
	only := filepath.Join(top, "only.txt")
	must(os.WriteFile(only, []byte("c.go:3:3 const 1 -> 0 # why\n"), 0o644))
	eq, err = readEquiv(only, top)
	must(err)
	if len(eq) != 1 || !eq["c.go:3:3 const 1 -> 0"] {
		t.Errorf("readEquiv(-equiv): %v, want only c.go's key", eq)
	}
}

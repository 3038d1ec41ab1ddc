package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/engine"
)

// TestOpen_MustExist: a missing directory, or one that holds no store, is
// refused with ErrNoStore and nothing is created; an existing store opens.
// (Seen failing with the MustExist check removed from Open: the missing
// directory was created.)
func TestOpen_MustExist(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "missing")
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{missing, empty} {
		db, err := engine.Open(dir, engine.Options{MustExist: true})
		if !errors.Is(err, engine.ErrNoStore) {
			if db != nil {
				db.Close()
			}
			t.Fatalf("Open(%s, MustExist): %v, want ErrNoStore", dir, err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused Open created %s: %v", missing, err)
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Fatalf("a refused Open wrote into %s: %v", empty, names)
	}

	store := filepath.Join(base, "store")
	db := mustOpen(t, store, engine.Options{})
	db.Close()
	db, err := openStore(t, store, engine.Options{MustExist: true})
	if err != nil {
		t.Fatalf("Open of an existing store with MustExist: %v", err)
	}
	db.Close()
}

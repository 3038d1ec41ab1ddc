package cube_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube"
)

// TestOpenStore: a Store reads what a DB wrote, recovery report
// included, and opening one writes nothing beside the store (a DB makes
// its compilation cache there). Seen failing with OpenStore built on
// Open (cache/wasm appeared).
func TestOpenStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := open(t, dir, cube.Options{})
	ns, err := db.CreateNamespace(ctx, "s", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(ctx, []int32{1, 2}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "cache")); err != nil {
		t.Fatal(err)
	}

	st, err := cube.OpenStore(dir, cube.Options{MustExist: true, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if infos := st.Namespaces(); len(infos) != 1 || infos[0].Name != "s" || infos[0].Values != 1 {
		t.Fatalf("namespaces: %+v", infos)
	}
	ns, err = st.Namespace("s")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ns.Get(ctx, []int32{1, 2}); err != nil || string(v) != "v" {
		t.Fatalf("get = %q, %v", v, err)
	}
	if _, err := st.Namespace("nope"); !errors.Is(err, cube.ErrNoNamespace) {
		t.Fatalf("missing namespace: %v", err)
	}
	if st.Dir() != dir || st.StoreInfo().Recovery.CheckpointLSN == 0 {
		t.Fatalf("dir %s, recovery %+v", st.Dir(), st.StoreInfo().Recovery)
	}
	if _, err := os.Stat(filepath.Join(dir, "cache")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenStore wrote beside the store: %v", err)
	}
}

// TestRootOptions: the store fields of Options take the place of
// Engine's: MustExist refuses a missing store (making nothing), a key
// makes an encrypted store that refuses to open without it, and Sync
// reaches the engine. Seen failing with Options.engine ignoring each.
func TestRootOptions(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "missing")
	for _, o := range []func(string, cube.Options) error{
		func(d string, o cube.Options) error { db, err := cube.Open(d, o); closeIf(db, err); return err },
		func(d string, o cube.Options) error { st, err := cube.OpenStore(d, o); closeIf(st, err); return err },
	} {
		if err := o(missing, cube.Options{MustExist: true}); !errors.Is(err, cube.ErrNoStore) {
			t.Fatalf("MustExist on %s: %v", missing, err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused open made %s", missing)
	}

	key := bytes.Repeat([]byte{9}, 32)
	dir := filepath.Join(base, "sealed")
	db := open(t, dir, cube.Options{EncryptionKey: key, Sync: cube.SyncNone})
	if got := db.StoreInfo().Sync; got != "none" {
		t.Fatalf("sync mode %q, want none", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cube.OpenStore(dir, cube.Options{}); !errors.Is(err, cube.ErrWrongKey) {
		t.Fatalf("encrypted store without its key: %v", err)
	}
	st, err := cube.OpenStore(dir, cube.Options{EncryptionKey: key})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}

func closeIf(c interface{ Close() error }, err error) {
	if err == nil {
		c.Close()
	}
}

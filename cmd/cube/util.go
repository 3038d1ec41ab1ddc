package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cubelinux/cube"
)

func readAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(r)
}

// hasStore reports whether dir holds a cube store (its FORMAT file).
func hasStore(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "FORMAT"))
	return err == nil
}

// noStoreError is what every verb but serve, the REPL and import says
// when its data directory holds no store: those three make one, the
// others never do, so that a mistyped --data changes nothing.
// check says what to look at: the flag or argument that named dir.
func noStoreError(dir, check string) error {
	why := "the directory holds no cube store"
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		why = "the directory does not exist"
	} else if err != nil {
		why = err.Error()
	}
	return &noStore{dir, why, check}
}

type noStore struct{ dir, why, check string }

func (e *noStore) Error() string {
	return fmt.Sprintf("no store at %s: %s (check %s; 'cube serve --data DIR', 'cube --data DIR' for the REPL, or 'cube --data DIR -n NS import FILE' make one)", e.dir, e.why, e.check)
}

// storeUse says what openStore does with a directory that holds no store.
type storeUse int

const (
	// mustExist refuses it (noStoreError) and makes nothing: every verb
	// but those below, so that a mistyped --data changes nothing.
	mustExist storeUse = iota
	// mayCreate makes a store and says so on stderr, in one line: serve,
	// the REPL, import, and demo and stress on a --data of their own.
	mayCreate
	// scratch makes one silently: the temporary stores of demo and stress.
	scratch
)

// openStore opens the store in dir for a verb; use says whether a
// directory without one is refused or gets a new store. It is the one
// place a verb opens a cube.DB (openStoreOnly the one for a cube.Store),
// so that what every store needs from the command line (its key) is
// given in one place.
func (e *env) openStore(dir string, o cube.Options, use storeUse) (*cube.DB, error) {
	fresh := !hasStore(dir)
	o.MustExist = use == mustExist
	key, err := e.storeKey()
	if err != nil {
		return nil, err
	}
	o.EncryptionKey = key
	db, err := cube.Open(dir, o)
	if errors.Is(err, cube.ErrNoStore) {
		return nil, noStoreError(dir, "--data or $CUBE_DATA")
	}
	if err != nil {
		return nil, e.keyError(err, key != nil)
	}
	if fresh && use == mayCreate {
		fmt.Fprintf(e.stderr, "cube: created a new store in %s\n", dir)
	}
	return db, nil
}

// openStoreOnly opens the store in dir without its programs (a
// cube.Store), for verbs that read below them (verify). It never makes a
// store: a directory without one is cube.ErrNoStore.
func (e *env) openStoreOnly(dir string, o cube.Options) (*cube.Store, error) {
	o.MustExist = true
	key, err := e.storeKey()
	if err != nil {
		return nil, err
	}
	o.EncryptionKey = key
	db, err := cube.OpenStore(dir, o)
	return db, e.keyError(err, key != nil)
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
)

func readAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(r)
}

// parseFlags parses fs's flags wherever they stand among args, so that
// "import FILE --dims 2" reads like "import --dims 2 FILE", and returns
// the other arguments in order. After "--" every argument is positional.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
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

// openStore opens the store in dir for a verb. With create false a
// directory without a store is refused (noStoreError) and nothing is
// made; with create true (serve, the REPL, import) a new store is made
// and stderr says so in one line.
func (e *env) openStore(dir string, o cube.Options, create bool) (*cube.DB, error) {
	fresh := !hasStore(dir)
	o.Engine.MustExist = !create
	db, err := cube.Open(dir, o)
	if errors.Is(err, engine.ErrNoStore) {
		return nil, noStoreError(dir, "--data or $CUBE_DATA")
	}
	if err != nil {
		return nil, err
	}
	if fresh {
		fmt.Fprintf(e.stderr, "cube: created a new store in %s\n", dir)
	}
	return db, nil
}

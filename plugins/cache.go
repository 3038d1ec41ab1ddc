package plugins

import (
	"context"
	"errors"
	"sync"

	"github.com/cubelinux/cube/vm"
)

// The compile cache: each entry (one version of a program) holds its
// compiled vm.Program, made on first use and shared by every run of that
// version. A version replaced or removed while it runs is retired: new runs
// of it are refused (errRetired, and Run looks the program up again), and
// its vm.Program is closed when the last run using it releases it.

// entry is one version of a program, compiled on first use.
type entry struct {
	name string
	rec  *record
	tel  *telemetry // shared by every version under the name

	// cache guards prog. It is held across a Compile (which may run a WASM
	// start function, bounded by the program's timeout), so the runs of a
	// version that is not compiled yet wait for one compile rather than
	// each making their own; it is never held across a run.
	cache struct {
		sync.Mutex
		prog *compiled // nil until the first run (or Prog) compiles it
	}
}

// compiled is a vm.Program with a count of the runs using it, so a version
// replaced while it runs is closed when its last run ends.
type compiled struct {
	p vm.Program
	// mu guards the count and the retired mark. It is a leaf: nothing is
	// locked while it is held, and p.Close runs after it is released.
	mu struct {
		sync.Mutex
		refs    int
		retired bool
	}
}

func (c *compiled) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.retired {
		return false
	}
	c.mu.refs++
	return true
}

func (c *compiled) release() {
	c.mu.Lock()
	c.mu.refs--
	closeNow := c.mu.retired && c.mu.refs == 0
	c.mu.Unlock()
	if closeNow {
		_ = c.p.Close(context.Background())
	}
}

func (c *compiled) retire() {
	c.mu.Lock()
	closeNow := !c.mu.retired && c.mu.refs == 0
	c.mu.retired = true
	c.mu.Unlock()
	if closeNow {
		_ = c.p.Close(context.Background())
	}
}

func (e *entry) retire() {
	e.cache.Lock()
	if e.cache.prog != nil {
		e.cache.prog.retire()
	}
	e.cache.Unlock()
}

// compiled returns the entry's compiled program, compiling it on first use,
// with a reference the caller must release.
func (r *Registry) compiled(ctx context.Context, e *entry) (*compiled, error) {
	e.cache.Lock()
	defer e.cache.Unlock()
	if e.cache.prog == nil {
		sb, err := r.sandbox(e.rec.kind)
		if err != nil {
			return nil, err
		}
		p, err := sb.Compile(ctx, e.rec.code, r.limits(e.rec))
		if err != nil {
			return nil, err
		}
		e.cache.prog = &compiled{p: p}
	}
	if !e.cache.prog.acquire() {
		// Replaced or removed between lookup and here: the caller looks
		// it up again.
		return nil, errRetired
	}
	return e.cache.prog, nil
}

var errRetired = errors.New("plugins: program version retired")

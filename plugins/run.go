//lint:file-ignore SA2001 Run waits for a registering writer with an empty critical section on purpose.

package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// Run runs program name of namespace ns with args and returns its result.
//
// A read-only program runs on a snapshot; a read-write one inside one
// engine transaction whose writes commit, durably as the sync mode
// promises, when the program succeeds. On failure Run returns the
// program's partial Result (logs, counters) and the error, and none of the
// run's writes is visible, ever.
//
// # Errors
//
// ErrNoProgram; a *vm.Error (vm.KindOf tells trap, timeout, limits, guest
// error, ...); engine errors (engine.ErrNoNamespace, engine.ErrFailed).
func (r *Registry) Run(ctx context.Context, ns, name string, args []byte) (vm.Result, error) {
	g, err := r.reg(ctx, ns)
	if err != nil {
		return vm.Result{}, err
	}
	for attempt := 0; ; attempt++ {
		e, err := r.find(ctx, g, name)
		if err != nil {
			return vm.Result{}, err
		}
		if e == nil {
			return vm.Result{}, fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
		}
		res, err := r.runEntry(ctx, g, e, args)
		if attempt < 8 && (errors.Is(err, errRetired) || errors.Is(err, errStale)) {
			// A Prog or Unprog is between its commit and its update of
			// the in-memory mirror: wait for it (it holds wmu), then look
			// again. Past two attempts the metadata was changed behind
			// the registry's back: reread it.
			g.wmu.Lock()
			g.wmu.Unlock()
			if attempt >= 2 {
				if err := r.refresh(ctx, g, name); err != nil {
					return vm.Result{}, err
				}
			}
			continue
		}
		return res, err
	}
}

// errStale: the run's transaction sees another version than the entry the
// run started with.
var errStale = errors.New("plugins: program version changed")

func (r *Registry) runEntry(ctx context.Context, g *nsReg, e *entry, args []byte) (vm.Result, error) {
	c, err := r.compiled(ctx, e)
	if err != nil {
		if !errors.Is(err, errRetired) {
			e.tel.record(0, vm.Result{}, err)
		}
		return vm.Result{}, err
	}
	defer c.release()
	key := progPrefix + e.name
	var res vm.Result
	run := func(tx *engine.Tx) error {
		// Run exactly the version this transaction sees.
		b, ok := tx.Meta(key)
		if v, vok := recordVersion(b); !ok || !vok || !bytes.Equal(v, e.rec.version[:]) {
			return errStale
		}
		h := newHost(tx)
		defer h.close()
		var err error
		res, err = c.p.Run(ctx, h, args)
		return err
	}
	start := time.Now()
	if e.rec.readOnly {
		err = g.ns.View(ctx, run)
	} else {
		err = g.ns.Update(ctx, run)
	}
	if !errors.Is(err, errStale) {
		e.tel.record(time.Since(start), res, err)
	}
	return res, err
}

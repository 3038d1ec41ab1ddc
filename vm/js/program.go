package js

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// Program is a compiled JavaScript program. Runs take a locked-down
// runtime from the program's pool, call a fresh instance of the program's
// top level, then its run(args).
type Program struct {
	sb      *Sandbox
	name    string
	factory *goja.Program
	lim     vm.Limits
	// pool holds idle runtimes. A channel, not a sync.Pool: building a
	// locked-down runtime costs milliseconds, too much to redo after
	// every garbage collection empties a sync.Pool.
	pool   chan *pooled
	closed atomic.Bool
}

var _ vm.Program = (*Program)(nil)

// pooled is a frozen runtime with the program's wrapper loaded.
type pooled struct {
	b       *binding
	factory goja.Callable
}

func (p *Program) newRuntime() (*pooled, error) {
	b, err := newBinding(p.sb.boot, p.sb.maxStack, p.sb.rxLimit, p.sb.wd, true)
	if err != nil {
		return nil, &vm.Error{Kind: vm.KindTrap, Msg: "cannot build a runtime: " + err.Error(), Err: err}
	}
	v, err := b.r.RunProgram(p.factory)
	if err != nil {
		return nil, toError(err, nil, len(wrapPrefix))
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &vm.Error{Kind: vm.KindBadModule, Msg: "the script does not compile to a function body"}
	}
	return &pooled{b: b, factory: f}, nil
}

// Run executes the program. See vm.Program.
func (p *Program) Run(ctx context.Context, host vm.Host, args []byte) (res vm.Result, err error) {
	if p.closed.Load() {
		return vm.Result{}, ErrClosed
	}
	var rt *pooled
	select {
	case rt = <-p.pool:
	default:
		if rt, err = p.newRuntime(); err != nil {
			return vm.Result{}, err
		}
	}
	b := rt.b
	end := b.begin(ctx, host, args, p.lim)
	reuse := false
	defer func() {
		if x := recover(); x != nil {
			err = &vm.Error{Kind: vm.KindTrap, Msg: "internal error in the JavaScript runtime"}
			res = vm.Result{}
			reuse = false
		}
		if end() && reuse {
			p.put(rt)
		}
		if err != nil {
			p.sb.log.Debug("js run failed", "program", p.name, "err", err)
		}
	}()
	// The top level runs inside the run's limits, with the host attached.
	v, rerr := rt.factory(goja.Undefined())
	var run goja.Callable
	if rerr == nil {
		run, _ = goja.AssertFunction(v)
		if run == nil {
			reuse = true // nothing went wrong in the runtime
			return vm.Result{}, &vm.Error{Kind: vm.KindBadModule, Msg: "run is not a function"}
		}
		v, rerr = run(goja.Undefined(), b.r.ToValue(string(args)))
	}
	if rerr != nil {
		return vm.Result{}, toError(rerr, b.failed(), len(wrapPrefix))
	}
	out, oerr := b.output(v)
	if oerr != nil {
		return vm.Result{}, oerr
	}
	if f := b.failed(); f != nil {
		return vm.Result{}, f
	}
	reuse = true
	return vm.Result{Output: out, Logs: b.logs, HostCalls: b.calls, Writes: b.writes}, nil
}

// Close releases the program; later runs fail with ErrClosed.
func (p *Program) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	p.sb.forget(p)
	for {
		select {
		case <-p.pool:
		default:
			return nil
		}
	}
}

// poolSize is how many idle runtimes a program keeps: enough for every
// processor to run it at once.
func poolSize() int { return max(2, runtime.GOMAXPROCS(0)) }

// put returns rt to the pool, or drops it when the pool is full or the
// program closed.
func (p *Program) put(rt *pooled) {
	if p.closed.Load() {
		return
	}
	select {
	case p.pool <- rt:
	default:
	}
}

package js

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// Program is a compiled JavaScript program. Runs take a locked-down
// runtime from the sandbox's pool, call a fresh instance of the program's
// top level, then its run(args).
type Program struct {
	sb      *Sandbox
	name    string
	factory *goja.Program
	lim     vm.Limits
	closed  atomic.Bool
}

var _ vm.Program = (*Program)(nil)

// pooled is a frozen runtime, shared by the sandbox's programs, with the
// wrappers of the programs that ran in it loaded. Sharing is as safe as
// reusing a runtime for the runs of one program, which cube always did:
// every object a run can reach before it creates its own is frozen, so
// a run can leave nothing behind for the next, whichever program that
// next run belongs to.
type pooled struct {
	b      *binding
	loaded map[*Program]goja.Callable
}

// maxLoaded bounds the wrappers one pooled runtime keeps: past it the
// runtime forgets them all and loads each again at its next run (a
// function expression, microseconds).
const maxLoaded = 128

// newRuntime builds a frozen runtime: milliseconds, the whole of what a
// runtime per program cost each new program (lockdown freezes every
// built-in).
func (s *Sandbox) newRuntime() (*pooled, error) {
	s.built.Add(1)
	start := time.Now()
	b, err := newBinding(s.boot, s.maxStack, s.rxLimit, s.wd, true)
	s.buildTime.Store(int64(time.Since(start)))
	if err != nil {
		return nil, &vm.Error{Kind: vm.KindTrap, Msg: "cannot build a runtime: " + err.Error(), Err: err}
	}
	return &pooled{b: b, loaded: map[*Program]goja.Callable{}}, nil
}

// load returns p's wrapper in rt, evaluating it there the first time.
func (rt *pooled) load(p *Program) (goja.Callable, error) {
	if f, ok := rt.loaded[p]; ok {
		return f, nil
	}
	v, err := rt.b.r.RunProgram(p.factory)
	if err != nil {
		return nil, toError(err, nil, len(wrapPrefix))
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &vm.Error{Kind: vm.KindBadModule, Msg: "the script does not compile to a function body"}
	}
	if len(rt.loaded) >= maxLoaded {
		clear(rt.loaded)
	}
	rt.loaded[p] = f
	return f, nil
}

// Run executes the program. See vm.Program.
func (p *Program) Run(ctx context.Context, host vm.Host, args []byte) (res vm.Result, err error) {
	if p.closed.Load() {
		return vm.Result{}, ErrClosed
	}
	rt, err := p.sb.take(ctx)
	if err != nil {
		return vm.Result{}, err
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
			p.sb.put(rt)
		}
		if err != nil {
			p.sb.log.Debug("js run failed", "program", p.name, "err", err)
		}
	}()
	factory, ferr := rt.load(p)
	if ferr != nil {
		return vm.Result{}, ferr
	}
	// The top level runs inside the run's limits, with the host attached.
	v, rerr := factory(goja.Undefined())
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
	return nil
}

// poolSize is how many idle runtimes a sandbox keeps: enough for every
// processor to run at once, and at least 4, since on a small machine runs
// that wait (on a host call, or preempted) hold theirs meanwhile. Each is
// about 0.75 MiB; take's wait, not a bigger pool, keeps bursts from
// building more.
func poolSize() int { return max(4, runtime.GOMAXPROCS(0)) }

// take returns an idle runtime. When none is idle it waits for one to be
// given back for as long as building one last took, and only then builds
// one: a burst of runs beyond the idle runtimes, each over in
// microseconds, would otherwise build a runtime apiece (milliseconds of
// CPU each) and drop it when the pool is full again. A run that waits
// that long pays at most twice what building at once would have cost, and
// runtimes held by slow runs never keep another waiting for longer. The
// wait ends early when ctx is done.
func (s *Sandbox) take(ctx context.Context) (*pooled, error) {
	select {
	case rt := <-s.pool:
		return rt, nil
	default:
	}
	if wait := time.Duration(s.buildTime.Load()); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case rt := <-s.pool:
			t.Stop()
			return rt, nil
		case <-ctx.Done():
			t.Stop()
			kind := vm.KindAborted
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				kind = vm.KindTimeout
			}
			return nil, &vm.Error{Kind: kind, Msg: "ended while waiting for an idle runtime: " + ctx.Err().Error(), Err: ctx.Err()}
		case <-t.C:
		}
	}
	return s.newRuntime()
}

// put returns rt to the pool, or drops it when the pool is full or the
// sandbox closed.
func (s *Sandbox) put(rt *pooled) {
	if s.closed.Load() {
		return
	}
	select {
	case s.pool <- rt:
	default:
	}
}

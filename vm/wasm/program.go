package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cubelinux/cube/vm"
)

// Program is a compiled module. It implements vm.Program; Run may be
// called concurrently.
type Program struct {
	s    *Sandbox
	rt   wazero.Runtime // one per program: the memory limit is a runtime setting
	mod  wazero.CompiledModule
	mcfg wazero.ModuleConfig
	// allocCtx carries the memory allocator (p.mem) to InstantiateModule:
	// a run's context answers its key (see runState.Value), where
	// experimental.WithMemoryAllocator would cost an allocation per run.
	allocCtx context.Context
	lim      vm.Limits
	hasInit  bool
	mem      memPool

	counter    string // export name of the stack counter (instrument.Result.Counter)
	stop       string // export name of the stop flag (instrument.Result.Stop)
	yield      uint32 // index of the rewriter's import among the imported functions
	stackSlots uint32 // the stack budget, in 8-byte slots

	runs sync.Pool // *runState, see newRun

	mu     sync.Mutex
	idle   []*instance // vm.Reuse, or vm.Fresh with reset
	reset  *resetPlan  // vm.Fresh, a stateless module: instances are reset for the next run, not closed
	spare  *instance   // vm.Fresh only: Compile's trial instance, never run (see acquire)
	closed bool
}

var _ vm.Program = (*Program)(nil)

type instance struct {
	m       api.Module
	run     api.Function
	flag    api.MutableGlobal // the stop flag (see runState.arm)
	counter api.MutableGlobal // the stack counter (see stackErr)
	init    *vm.Guard         // a spare's: what its _initialize counted and logged
}

// instantiate makes a new instance in its initial state: start function
// run, _initialize called, under rs (which carries the memory allocator
// too, see runState.Value).
func (p *Program) instantiate(rs *runState) (*instance, error) {
	m, err := p.rt.InstantiateModule(rs, p.mod, p.mcfg)
	if err != nil {
		return nil, err
	}
	in := &instance{m: m, run: m.ExportedFunction("run")}
	in.flag = m.ExportedGlobal(p.stop).(api.MutableGlobal)
	in.counter = m.ExportedGlobal(p.counter).(api.MutableGlobal)
	if p.hasInit {
		rs.arm(in.flag)
		err := m.ExportedFunction("_initialize").CallWithStack(rs, rs.stack[:])
		rs.disarm()
		if err != nil {
			err = p.stackErr(m, err)
			_ = m.Close(context.Background())
			return nil, err
		}
	}
	return in, nil
}

func (p *Program) acquire(rs *runState) (*instance, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return in, nil
	}
	if in := p.spare; in != nil {
		// Compile's trial instance: start function and _initialize run,
		// nothing else, so it is the instance this run would make (a Go
		// guest's first run saves ~6 ms). Its _initialize's WASI calls
		// and log count as this run's, as they would have.
		p.spare = nil
		p.mu.Unlock()
		rs.g, in.init = *in.init, nil
		return in, nil
	}
	p.mu.Unlock()
	return p.instantiate(rs)
}

// release closes a Fresh instance, or parks a healthy Reuse one for the
// next run, or a healthy Fresh one that p.reset can put back in its
// initial state.
func (p *Program) release(in *instance, healthy bool) {
	if healthy && (p.lim.Isolation == vm.Reuse || p.reset != nil && p.reset.reset(in)) {
		p.mu.Lock()
		if !p.closed {
			p.idle = append(p.idle, in)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	// Not ctx: it may be done, and Close needs none of its values
	// (context.WithoutCancel would cost an allocation per run).
	_ = in.m.Close(context.Background())
}

// Run implements vm.Program. On failure it returns the partial Result
// (logs, counters; no output) beside the *vm.Error, so callers can show the
// guest's log of a failed run.
func (p *Program) Run(ctx context.Context, host vm.Host, args []byte) (vm.Result, error) {
	if host == nil || host.Dims() < 1 || host.Dims() > 8 {
		return vm.Result{}, fmt.Errorf("wasm: run: host must have 1 to 8 dimensions")
	}
	rs := p.newRun(ctx)
	defer p.endRun(rs)
	rs.host, rs.dims, rs.args, rs.g = host, host.Dims(), args, *vm.NewGuard(p.lim)

	in, err := p.acquire(rs)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return vm.Result{}, &vm.Error{Kind: vm.KindAborted, Msg: "program closed", Err: err}
		}
		return rs.g.Result(), p.classify(ctx, rs, err, rs, nil)
	}
	stack := rs.stack[:] // in rs: a local would escape, an allocation per run
	rs.arm(in.flag)
	err = in.run.CallWithStack(rs, stack)
	rs.disarm()
	rs.closeCursors()
	var exited bool
	if err != nil {
		var ec exitCode
		if exited = errors.As(err, &ec); exited && ec == 0 {
			err, stack[0] = nil, 0 // proc_exit(0): a successful end, but the instance is spent
		}
	}
	res := rs.g.Result()
	if e := rs.g.Err(); e != nil {
		p.release(in, false)
		res.Output = nil
		return res, e
	}
	if err != nil {
		e := p.classify(ctx, rs, p.stackErr(in.m, err), rs, memory(in.m))
		p.release(in, false)
		res.Output = nil
		return res, e
	}
	p.release(in, !exited)
	if status := int32(stack[0]); status != 0 {
		res.Output = nil
		msg := rs.errMsg
		if !rs.hasErr {
			msg = fmt.Sprintf("run returned status %d", status)
		}
		return res, &vm.Error{Kind: vm.KindGuest, Msg: msg}
	}
	return res, nil
}

// classify turns what wazero returned into a *vm.Error. ctx is the
// caller's context, tctx the run's (with the time limit).
func (p *Program) classify(ctx, tctx context.Context, err error, rs *runState, mem api.Memory) error {
	if rs != nil {
		if e := rs.g.Err(); e != nil {
			return e
		}
	}
	var ve *vm.Error
	if errors.As(err, &ve) {
		e := *ve
		e.Err = err // keeps the wasm stack trace
		return p.atMemoryLimit(&e, mem)
	}
	var se *sys.ExitError
	switch {
	case errors.As(err, &se) && se.ExitCode() == sys.ExitCodeDeadlineExceeded,
		errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return &vm.Error{Kind: vm.KindTimeout, Msg: fmt.Sprintf("still running after the time limit of %v", p.lim.Timeout), Err: err}
	case errors.As(err, &se) && se.ExitCode() == sys.ExitCodeContextCanceled, ctx.Err() != nil:
		return &vm.Error{Kind: vm.KindAborted, Msg: "the run was cancelled", Err: ctx.Err()}
	case errors.Is(err, errStopped):
		// Stopped with the context still live: the program was closed.
		return &vm.Error{Kind: vm.KindAborted, Msg: "program closed", Err: err}
	}
	var ec exitCode
	if errors.As(err, &ec) {
		e := &vm.Error{Kind: vm.KindGuest, Msg: fmt.Sprintf("the guest exited with code %d", uint32(ec)), Err: err}
		if rs != nil && rs.hasErr {
			e.Msg = rs.errMsg
		}
		return p.atMemoryLimit(e, mem)
	}
	msg := err.Error()
	if i := strings.Index(msg, "\nwasm stack trace"); i >= 0 {
		msg = msg[:i]
	}
	if mem == nil && rs == nil {
		// The trial instantiation failed for a reason other than a trap in
		// the start function: the module does not link.
		if !strings.HasPrefix(msg, "wasm error:") {
			return &vm.Error{Kind: vm.KindBadModule, Msg: msg, Err: err}
		}
	}
	return p.atMemoryLimit(&vm.Error{Kind: vm.KindTrap, Msg: strings.TrimPrefix(msg, "wasm error: "), Err: err}, mem)
}

// atMemoryLimit reports a trap or exit as KindMemoryLimit when the guest's
// memory was within 1 MiB of the limit at the time: wazero makes a
// memory.grow past the limit return -1 rather than trap, and guests then
// trap or exit on their own (Go's runtime exits, C's malloc returns NULL
// and the program decides). A guest error the program set itself stays a
// guest error.
func (p *Program) atMemoryLimit(e *vm.Error, mem api.Memory) *vm.Error {
	if mem == nil || p.lim.MemoryBytes < 0 || (e.Kind != vm.KindTrap && e.Kind != vm.KindGuest) {
		return e
	}
	limit := int64(memoryPages(p.lim.MemoryBytes)) * 65536
	if int64(mem.Size())+1<<20 > limit {
		return &vm.Error{Kind: vm.KindMemoryLimit, Msg: fmt.Sprintf("guest memory reached the limit of %d bytes (then: %s)", limit, e.Msg), Err: e}
	}
	return e
}

// Close implements vm.Program.
func (p *Program) Close(ctx context.Context) error {
	p.s.mu.Lock()
	delete(p.s.progs, p)
	p.s.mu.Unlock()
	return p.close(ctx)
}

func (p *Program) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mem.closed.Store(true)
	p.idle, p.spare = nil, nil
	p.mu.Unlock()
	return p.rt.Close(ctx) // closes every instance, idle or running
}

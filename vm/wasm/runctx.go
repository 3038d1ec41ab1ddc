package wasm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// A runState is the context of its run: the caller's, with the run's
// time limit, and the stop flag of the instance the run is in. One timer
// (kept with the runState, which a program pools) ends the run at its
// limit, and a context.AfterFunc on the caller's context only if that can
// be cancelled at all. context.WithTimeout and a context.AfterFunc per
// run cost about ten allocations and two runtime timers, a sixth of a
// trivial run.
//
// When the run stops, for either reason, its Err is set, its Done channel
// (made only if asked for) closed, and the stop flag of the instance
// armed (see arm) set, so the rewritten code calls yield at its next loop
// header or function entry and yield ends it.

// Why a run stopped: rs.state.
const (
	running  = iota
	timedOut // the run's own time limit
	parentDone
)

// newRun returns a runState for one run of p under ctx, from p's pool.
func (p *Program) newRun(ctx context.Context) *runState {
	rs, _ := p.runs.Get().(*runState)
	if rs == nil {
		rs = &runState{}
	}
	rs.parent, rs.vals = ctx, p.allocCtx
	if ctx.Done() != nil {
		rs.unparent = context.AfterFunc(ctx, rs.parentStopped)
	}
	if d := p.lim.Timeout; d > 0 {
		rs.deadline = time.Now().Add(d)
		if rs.timer == nil {
			rs.timer = time.AfterFunc(d, rs.expired)
		} else {
			rs.timer.Reset(d)
		}
	}
	return rs
}

// endRun stops rs's timer and callback and pools it for another run, or
// leaves it to the collector when one of them already fired: the
// callback may still be about to run, and must not touch the next run.
func (p *Program) endRun(rs *runState) {
	reusable := true
	if rs.unparent != nil {
		reusable = rs.unparent()
	}
	if !rs.deadline.IsZero() && !rs.timer.Stop() {
		reusable = false
	}
	if !reusable {
		return
	}
	timer := rs.timer
	clear(rs.cursors)
	cursors, keyBuf := rs.cursors[:0], rs.keyBuf[:0]
	*rs = runState{stopCtx: stopCtx{timer: timer}, cursors: cursors, keyBuf: keyBuf}
	p.runs.Put(rs)
}

func (rs *runState) expired()       { rs.stopAs(timedOut) }
func (rs *runState) parentStopped() { rs.stopAs(parentDone) }

func (rs *runState) stopAs(why int32) {
	rs.mu.Lock()
	if rs.state.CompareAndSwap(running, why) {
		if rs.done != nil {
			close(rs.done)
		}
		if rs.flag != nil {
			rs.flag.Set(instrument.StopValue)
		}
	}
	rs.mu.Unlock()
}

// arm clears the stop flag of the instance that rs's run enters, and has
// it set (at once if rs has already stopped) when the run stops, until
// disarm. Between runs no callback can touch the flag, so a reused
// instance needs no generation count.
func (rs *runState) arm(flag api.MutableGlobal) {
	rs.mu.Lock()
	rs.flag = flag
	if rs.state.Load() == running {
		flag.Set(0)
	} else {
		flag.Set(instrument.StopValue)
	}
	rs.mu.Unlock()
}

func (rs *runState) disarm() {
	rs.mu.Lock()
	rs.flag = nil
	rs.mu.Unlock()
}

// Deadline implements context.Context: the earlier of the run's limit and
// the caller's deadline.
func (rs *runState) Deadline() (time.Time, bool) {
	d, ok := rs.parent.Deadline()
	if !rs.deadline.IsZero() && (!ok || rs.deadline.Before(d)) {
		return rs.deadline, true
	}
	return d, ok
}

// Done implements context.Context. The channel is made on demand: the
// host functions of a trivial run never ask for it.
func (rs *runState) Done() <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done == nil {
		rs.done = make(chan struct{})
		if rs.state.Load() != running {
			close(rs.done)
		}
	}
	return rs.done
}

// Err implements context.Context: context.DeadlineExceeded past the run's
// limit, the caller's error once its context is done.
func (rs *runState) Err() error {
	switch rs.state.Load() {
	case timedOut:
		return context.DeadlineExceeded
	case parentDone:
		return rs.parent.Err()
	}
	return nil
}

// Value implements context.Context. It answers stateKey with rs, so that
// a context wazero derives from the run's (the one a start function runs
// under, inside InstantiateModule) still leads to the run: see runOf. The
// program's own values (Program.allocCtx) come before the caller's.
func (rs *runState) Value(key any) any {
	if key == (stateKey{}) {
		return rs
	}
	if v := rs.vals.Value(key); v != nil {
		return v
	}
	return rs.parent.Value(key)
}

// stopCtx is the run-state part a pool keeps: see newRun.
type stopCtx struct {
	parent   context.Context
	vals     context.Context // Program.allocCtx
	deadline time.Time       // zero: no time limit
	timer    *time.Timer     // fires at deadline; kept across runs
	unparent func() bool     // stops the AfterFunc on parent; nil when parent cannot be cancelled

	state atomic.Int32 // running, timedOut, parentDone
	mu    sync.Mutex   // done, flag, and the move out of running
	done  chan struct{}
	flag  api.MutableGlobal // the stop flag of the instance the run is in, between arm and disarm
}

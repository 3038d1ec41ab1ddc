package wasm

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// WASIModuleName is the one WASI module a guest may import from, and then
// only the functions in wasiFuncs.
const WASIModuleName = "wasi_snapshot_preview1"

// WASI errno values used here.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoInval   = 28
	errnoSpipe   = 70
)

// exitCode is proc_exit's panic value: it unwinds the guest like a trap,
// and Run turns it back into a status.
type exitCode uint32

func (c exitCode) Error() string { return fmt.Sprintf("proc_exit(%d)", uint32(c)) }

// enterWASI counts a WASI call against the run's limits. Unlike enter it
// also works in Compile's trial instantiation, a run with no host (the Go
// runtime's _initialize reads the clock and random source), whose counts
// and log the first run may take over (see Program.acquire); nil means no
// run at all.
func enterWASI(ctx context.Context) *runState {
	rs := runOf(ctx)
	if rs == nil {
		return nil
	}
	if e := rs.g.Err(); e != nil {
		panic(e)
	}
	if e := rs.g.Call(); e != nil {
		panic(e)
	}
	return rs
}

// wasiFuncs is the WASI subset: what Go (GOOS=wasip1) and C (wasi-libc)
// guests import to start and print, with no file system, no network, no
// environment and no arguments (a program's arguments come from
// cube_v1.args_read). Only file descriptors 0, 1 and 2 exist; 1 and 2 write
// to the run's log. See docs/ABI.md, "WASI".
func wasiFuncs(epoch time.Time, logger *slog.Logger) []hostFunc {
	zero2 := func(ctx context.Context, m api.Module, s []uint64) {
		enterWASI(ctx)
		putU32(memory(m), "wasi", "count out-pointer", u32(s[0]), 0)
		putU32(memory(m), "wasi", "size out-pointer", u32(s[1]), 0)
		s[0] = errnoSuccess
	}
	ok := func(ctx context.Context, _ api.Module, s []uint64) {
		enterWASI(ctx)
		s[0] = errnoSuccess
	}
	badf := func(ctx context.Context, _ api.Module, s []uint64) {
		enterWASI(ctx)
		s[0] = errnoBadf
	}
	now := func(id uint32) (uint64, bool) {
		switch id {
		case 0: // realtime
			return uint64(time.Now().UnixNano()), true
		case 1, 2, 3: // monotonic, process and thread CPU time
			return uint64(time.Since(epoch)), true
		}
		return 0, false
	}
	i64 := api.ValueTypeI64
	return []hostFunc{
		{"args_sizes_get", i32s(2), i32s(1), zero2},
		{"args_get", i32s(2), i32s(1), ok},
		{"environ_sizes_get", i32s(2), i32s(1), zero2},
		{"environ_get", i32s(2), i32s(1), ok},
		{"clock_time_get", []api.ValueType{i32, i64, i32}, i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			t, ok := now(u32(s[0]))
			if !ok {
				s[0] = errnoInval
				return
			}
			binary.LittleEndian.PutUint64(view(memory(m), "clock_time_get", "time out-pointer", u32(s[2]), 8), t)
			s[0] = errnoSuccess
		}},
		{"clock_res_get", i32s(2), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			if _, ok := now(u32(s[0])); !ok {
				s[0] = errnoInval
				return
			}
			binary.LittleEndian.PutUint64(view(memory(m), "clock_res_get", "resolution out-pointer", u32(s[1]), 8), 1000)
			s[0] = errnoSuccess
		}},
		{"random_get", i32s(2), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			_, _ = rand.Read(view(memory(m), "random_get", "buffer", u32(s[0]), u32(s[1])))
			s[0] = errnoSuccess
		}},
		{"fd_write", i32s(4), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			rs := enterWASI(ctx)
			fd := u32(s[0])
			if fd != 1 && fd != 2 {
				s[0] = errnoBadf
				return
			}
			mem := memory(m)
			n := u32(s[2])
			if n > 1<<16 {
				trap("fd_write", "%d iovecs", n)
			}
			iovs := view(mem, "fd_write", "iovec array", u32(s[1]), n*8)
			var b strings.Builder
			total := uint32(0)
			for i := range n {
				p := binary.LittleEndian.Uint32(iovs[8*i:])
				l := binary.LittleEndian.Uint32(iovs[8*i+4:])
				data := view(mem, "fd_write", "iovec", p, l)
				total += l
				if b.Len() < 64<<10 {
					b.Write(data[:min(len(data), 64<<10)])
				}
			}
			text := strings.TrimSuffix(b.String(), "\n")
			for _, line := range strings.Split(text, "\n") {
				if rs != nil {
					rs.g.Log(line)
				}
				if rs == nil || rs.host == nil {
					logger.Debug("wasm guest output outside a run", "fd", fd, "line", line)
				}
			}
			putU32(mem, "fd_write", "written out-pointer", u32(s[3]), total)
			s[0] = errnoSuccess
		}},
		{"fd_read", i32s(4), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			if u32(s[0]) != 0 {
				s[0] = errnoBadf
				return
			}
			putU32(memory(m), "fd_read", "read out-pointer", u32(s[3]), 0) // stdin is empty
			s[0] = errnoSuccess
		}},
		{"fd_close", i32s(1), i32s(1), badf},
		{"fd_seek", []api.ValueType{i32, i64, i32, i32}, i32s(1), func(ctx context.Context, _ api.Module, s []uint64) {
			enterWASI(ctx)
			if u32(s[0]) <= 2 {
				s[0] = errnoSpipe
				return
			}
			s[0] = errnoBadf
		}},
		{"fd_fdstat_get", i32s(2), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			fd := u32(s[0])
			if fd > 2 {
				s[0] = errnoBadf
				return
			}
			st := view(memory(m), "fd_fdstat_get", "fdstat out-pointer", u32(s[1]), 24)
			clear(st)
			st[0] = 2                // character device
			rights := uint64(1 << 1) // fd_read
			if fd > 0 {
				rights = 1 << 6 // fd_write
			}
			binary.LittleEndian.PutUint64(st[8:], rights)
			s[0] = errnoSuccess
		}},
		{"fd_fdstat_set_flags", i32s(2), i32s(1), func(ctx context.Context, _ api.Module, s []uint64) {
			enterWASI(ctx)
			if u32(s[0]) > 2 {
				s[0] = errnoBadf
				return
			}
			s[0] = errnoSuccess
		}},
		{"fd_prestat_get", i32s(2), i32s(1), badf}, // no preopened directories
		{"fd_prestat_dir_name", i32s(3), i32s(1), badf},
		{"proc_exit", i32s(1), nil, func(ctx context.Context, _ api.Module, s []uint64) {
			panic(exitCode(u32(s[0])))
		}},
		{"sched_yield", nil, i32s(1), ok},
		{"poll_oneoff", i32s(4), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			enterWASI(ctx)
			pollOneoff(ctx, memory(m), s, now)
		}},
	}
}

// pollOneoff sleeps until the earliest clock subscription (bounded by the
// run's deadline, since it watches ctx) and reports it; fd subscriptions
// complete at once with EBADF, as there are no files to wait on.
func pollOneoff(ctx context.Context, mem api.Memory, s []uint64, now func(uint32) (uint64, bool)) {
	n := u32(s[2])
	if n == 0 || n > 1<<12 {
		s[0] = errnoInval
		return
	}
	in := view(mem, "poll_oneoff", "subscriptions", u32(s[0]), n*48)
	out := view(mem, "poll_oneoff", "events", u32(s[1]), n*32)
	nOut := view(mem, "poll_oneoff", "count out-pointer", u32(s[3]), 4)
	events := 0
	event := func(sub []byte, errno uint16) {
		e := out[32*events : 32*events+32]
		clear(e)
		copy(e[:8], sub[:8])
		binary.LittleEndian.PutUint16(e[8:], errno)
		e[10] = sub[8]
		events++
	}
	var wait time.Duration = -1
	var first []byte
	for i := range n {
		sub := in[48*i : 48*i+48]
		switch sub[8] {
		case 0: // clock
			id := binary.LittleEndian.Uint32(sub[16:])
			timeout := binary.LittleEndian.Uint64(sub[24:])
			if binary.LittleEndian.Uint16(sub[40:])&1 != 0 { // absolute
				t, ok := now(id)
				if !ok {
					event(sub, errnoInval)
					continue
				}
				timeout = max(timeout, t) - t
			}
			d := time.Duration(min(timeout, uint64(1<<62)))
			if wait < 0 || d < wait {
				wait, first = d, sub
			}
		default: // fd_read, fd_write
			event(sub, errnoBadf)
		}
	}
	if events == 0 && first != nil {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		event(first, errnoSuccess)
	}
	binary.LittleEndian.PutUint32(nOut, uint32(events))
	s[0] = errnoSuccess
}

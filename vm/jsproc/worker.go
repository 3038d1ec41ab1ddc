package jsproc

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

// dataSlack is what a run may use beyond its memory limit before the kernel
// refuses the worker more memory: goja's own bookkeeping of the run's
// objects (a string's header, an array's backing slice growing by
// doubling) and the host-call buffers.
const dataSlack = 32 << 20

// maxCachedPrograms bounds the compiled programs one worker keeps.
const maxCachedPrograms = 256

// interruptFDEnv names the environment variable through which the pool
// tells a worker which of its file descriptors carries interrupts (see
// Serve).
const interruptFDEnv = "CUBE_JSPROC_INTERRUPT_FD"

// Serve is the worker side: it reads requests from r and writes messages
// to w until r ends, running each request in this process. It is meant to
// be the whole of a worker process (cube's hidden verb calls it): it sets
// the process's memory limits, ignores interrupts meant for its parent's
// terminal, and a run over its memory limit ends the process.
//
// The goroutine that reads a request runs it and reads the replies to
// its host calls: a request handed from a reader goroutine to a runner
// woke a second thread for every message, about a third of the context
// switches of a short run. The pool's interrupts (a caller that gave up)
// come on a pipe of their own, the descriptor named by interruptFDEnv,
// each the number of the request it stops; without one, a run that is
// computing cannot be interrupted, and the pool kills its worker after
// the grace instead.
func Serve(r io.Reader, w io.Writer) error {
	signal.Ignore(os.Interrupt)
	r, w = workerPipe(r), workerPipe(w)
	s := &server{
		sb:    js.New(js.Options{}),
		progs: map[string]vm.Program{},
		bw:    bufio.NewWriter(w),
		dec:   gob.NewDecoder(bufio.NewReader(r)),
	}
	s.enc = gob.NewEncoder(s.bw)
	// Warm the runtime up before measuring what an idle worker uses.
	if p, err := s.sb.Compile(context.Background(), []byte("function run(){ return JSON.stringify([1,'a',{b:2}]) }"), vm.Limits{}); err == nil {
		_, _ = p.Run(context.Background(), nil, nil)
		_ = p.Close(context.Background())
	}
	runtime.GC()
	lowerPriority()
	s.base, s.baseHeap, s.data = dataSize(), heapInUse(), newDataMeter()
	if f := interruptPipe(os.Getenv(interruptFDEnv)); f != nil {
		go s.readInterrupts(f)
	}
	// Say we are ready: the pool times requests from here, not from exec.
	if err := s.send(&message{Done: &done{}}); err != nil {
		return err
	}
	for {
		req := new(request)
		if err := s.dec.Decode(req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("jsproc: worker: %w", err)
		}
		if req.Op == opReply {
			// A reply with no call waiting for it: the pool's side of the
			// protocol is broken, and nothing after it can be trusted.
			return errors.New("jsproc: worker: a host-call reply while no run was waiting for one")
		}
		s.seq++
		d := s.handle(req)
		if err := s.send(&message{Done: d}); err != nil {
			return err
		}
	}
}

// readInterrupts cancels the requests the pool interrupts: each message
// is the number of a request (the first is 1), which may be the current
// one or one the worker has not read yet, never an earlier one that
// already ended (the pool interrupts only a request it waits on).
func (s *server) readInterrupts(f io.Reader) {
	var b [8]byte
	for {
		if _, err := io.ReadFull(f, b[:]); err != nil {
			return
		}
		seq := binary.LittleEndian.Uint64(b[:])
		s.mu.Lock()
		s.interrupted = max(s.interrupted, seq)
		if s.cur == seq && s.cancel != nil {
			s.cancel()
		}
		s.mu.Unlock()
	}
}

// server is the worker's state.
type server struct {
	sb       *js.Sandbox
	progs    map[string]vm.Program
	session  *js.Session
	base     int64 // data segment when idle
	baseHeap int64 // Go heap when idle
	data     *dataMeter
	// The limits in force, so that a request under the same limits as
	// the last (the common case) sets nothing: two system calls and the
	// runtime's heap lock saved per request.
	dataLimit, softLimit int64

	enc *gob.Encoder
	bw  *bufio.Writer
	dec *gob.Decoder // requests, and the replies to a run's host calls
	seq uint64       // requests read

	mu          sync.Mutex
	cur         uint64             // the request running, by number
	cancel      context.CancelFunc // of the current request
	interrupted uint64             // the latest request interrupted
}

func (s *server) send(m *message) error {
	if err := s.enc.Encode(m); err != nil {
		return err
	}
	return s.bw.Flush()
}

// handle runs one request under its limits.
func (s *server) handle(req *request) *done {
	lim := req.Limits.vm()
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cur, s.cancel = s.seq, cancel
	if s.interrupted >= s.seq {
		cancel() // interrupted before it was read
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur, s.cancel = 0, nil
		s.mu.Unlock()
		cancel()
	}()
	if lim.MemoryBytes > 0 {
		// The soft limit makes Go collect before the hard one refuses.
		// Both limits count from the idle worker, as the kernel's does;
		// reading the heap per request would stop the world each time.
		if soft := s.baseHeap + lim.MemoryBytes + dataSlack/2; soft != s.softLimit {
			debug.SetMemoryLimit(soft)
			s.softLimit = soft
		}
		if hard := s.base + lim.MemoryBytes + dataSlack; hard != s.dataLimit {
			limitData(hard)
			s.dataLimit = hard
		}
	}
	h := &remoteHost{s: s, dims: req.Dims, geo: req.Geo}
	defer h.closeAll()
	var c js.Completion
	var err error
	switch req.Op {
	case opCompile:
		var p vm.Program
		p, err = s.sb.Compile(ctx, req.Code, lim)
		if err == nil {
			s.keep(req.Prog, p)
		}
	case opRun:
		p, ok := s.progs[req.Prog]
		if !ok && req.Code == nil {
			return &done{Unknown: true, Grown: s.data.grown()}
		}
		if !ok {
			if p, err = s.sb.Compile(ctx, req.Code, lim); err == nil {
				s.keep(req.Prog, p)
			}
		}
		if err == nil {
			c.Result, err = p.Run(ctx, h, req.Args)
		}
	case opEval:
		c, err = s.sb.EvalCompletion(ctx, h, req.Script, req.Args, lim)
	case opSession:
		if s.session == nil {
			s.session = s.sb.NewSession(lim)
		}
		c, err = s.session.EvalWith(ctx, h, req.Script, req.Args, lim) // each request's own limits
	default:
		err = fmt.Errorf("jsproc: unknown request %d", req.Op)
	}
	return &done{Err: toWire(err), Output: c.Output, Logs: c.Logs, HostCalls: c.HostCalls,
		Writes: c.Writes, Type: c.Type, JSON: c.JSON, Grown: s.data.grown()}
}

func (s *server) keep(key string, p vm.Program) {
	if len(s.progs) >= maxCachedPrograms {
		// All of them, the rule the pool's mirror (worker.cached) follows.
		for k, old := range s.progs {
			_ = old.Close(context.Background())
			delete(s.progs, k)
		}
	}
	s.progs[key] = p
}

// heapInUse is the Go heap the worker holds now.
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

package jsproc

import (
	"bufio"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cubelinux/cube/vm"
)

// worker is one worker process and its end of the two pipes.
type worker struct {
	cmd    *exec.Cmd
	in     *os.File // its standard input
	out    *os.File // its standard output
	bw     *bufio.Writer
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *tail
	exited chan struct{}
	// intr carries interrupts: the number of the request to stop (see
	// Serve). seq numbers the requests sent, by the holder of the worker.
	intr *os.File
	seq  uint64

	emu   sync.Mutex // the encoder
	progs map[string]bool

	mu   sync.Mutex
	dead bool
	cur  *guard
}

func startWorker(argv, env []string) (*worker, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("jsproc: start worker: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("jsproc: start worker: %w", err)
	}
	intR, intW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("jsproc: start worker: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// The first of ExtraFiles is the child's descriptor 3.
	cmd.Env = append(append(os.Environ(), env...), interruptFDEnv+"=3")
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.ExtraFiles = []*os.File{intR}
	w := &worker{cmd: cmd, in: inW, intr: intW, stderr: &tail{max: 4 << 10}, exited: make(chan struct{}), progs: map[string]bool{}}
	cmd.Stderr = w.stderr
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	intR.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		intW.Close()
		return nil, fmt.Errorf("jsproc: start worker %s: %w", argv[0], err)
	}
	w.out = outR
	w.bw = bufio.NewWriter(inW)
	w.enc = gob.NewEncoder(w.bw)
	w.dec = gob.NewDecoder(bufio.NewReader(outR))
	go func() {
		_ = cmd.Wait()
		outR.Close()
		intW.Close()
		close(w.exited)
	}()
	// The worker says it is ready once its runtime is warm.
	ready := make(chan error, 1)
	go func() {
		var m message
		err := w.dec.Decode(&m)
		if err == nil && m.Done == nil {
			err = errors.New("it sent something else first")
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(startTimeout):
		err = fmt.Errorf("it did not say it was ready within %v", startTimeout)
	}
	if err != nil {
		w.kill()
		w.in.Close()
		w.wait(time.Second)
		return nil, fmt.Errorf("jsproc: start worker %s: %v (its standard error: %s)", argv[0], err, lastLine(w.stderr.String()))
	}
	return w, nil
}

// startTimeout bounds a worker's start, a loaded machine included.
const startTimeout = 30 * time.Second

func (w *worker) send(r *request) error {
	w.emu.Lock()
	defer w.emu.Unlock()
	if err := w.enc.Encode(r); err != nil {
		return err
	}
	return w.bw.Flush()
}

// kill stops the worker at once; a read of its output in progress returns
// without waiting for the process to be torn down.
func (w *worker) kill() {
	w.mu.Lock()
	w.dead = true
	w.mu.Unlock()
	_ = w.cmd.Process.Kill()
	w.out.Close()
}

func (w *worker) isDead() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead
}

// stop ends an idle worker: its input closes, and it is killed if it does
// not leave by itself.
func (w *worker) stop() {
	w.mu.Lock()
	w.dead = true
	w.mu.Unlock()
	w.in.Close()
	go func() {
		select {
		case <-w.exited:
		case <-time.After(time.Second):
			_ = w.cmd.Process.Kill()
		}
	}()
}

func (w *worker) wait(d time.Duration) {
	select {
	case <-w.exited:
	case <-time.After(d):
	}
}

func (w *worker) has(key string) bool { return w.progs[key] }

// forgot corrects the mirror: the worker does not hold key.
func (w *worker) forgot(key string) { delete(w.progs, key) }

// cached mirrors the worker's program cache after a request for key: the
// worker empties its cache when it is full, the same rule on both sides.
func (w *worker) cached(key string, d *done) {
	if w.progs[key] {
		return
	}
	if len(w.progs) >= maxCachedPrograms {
		clear(w.progs)
	}
	if d.Err == nil || d.Err.Kind != vm.KindBadModule {
		w.progs[key] = true
	}
}

// guard is one request on a worker: the timers that may stop it act only
// while it is current.
type guard struct {
	w      *worker
	seq    uint64 // the request's number, as the worker counts them
	mu     sync.Mutex
	ended  bool
	reason vm.ErrorKind
}

// begin numbers the request about to be sent; the caller holds w.
func (w *worker) begin() *guard {
	w.seq++
	g := &guard{w: w, seq: w.seq}
	w.mu.Lock()
	w.cur = g
	w.mu.Unlock()
	return g
}

func (g *guard) end() {
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

func (g *guard) kill(why vm.ErrorKind) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return
	}
	if g.reason == 0 {
		g.reason = why
	}
	g.w.kill()
}

func (g *guard) interrupt() {
	g.mu.Lock()
	ended := g.ended
	g.mu.Unlock()
	if !ended {
		// One write of 8 bytes to a pipe is atomic, whoever else writes.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], g.seq)
		_, _ = g.w.intr.Write(b[:])
	}
}

func (g *guard) killedBy() vm.ErrorKind {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason
}

// tail keeps the first and the last bytes a worker wrote to its standard
// error: a Go runtime's fatal error comes first, its goroutine dump after.
type tail struct {
	mu   sync.Mutex
	max  int
	head []byte
	b    []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := min(len(p), t.max-len(t.head)); n > 0 {
		t.head = append(t.head, p[:n]...)
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + "\n" + string(t.b)
}

// outOfMemory recognises the Go runtime's words for a refused allocation.
func outOfMemory(stderr string) bool {
	// The race detector says it its own way (errno 12 is ENOMEM), and a new
	// thread's stack is refused by pthread_create.
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to create new OS thread", "failed to allocate", "errno: 12", "pthread_create failed"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// runtimeFault recognises a worker that died of a signal inside the Go
// runtime itself. Go's garbage collector is not written to survive a
// refused mmap on every path (seen: a SIGSEGV in the green-tea GC's span
// queue right after RLIMIT_DATA refused memory), so in a worker, whose
// only reason to be short of memory is its run's limit, such a fault is
// that limit.
func runtimeFault(stderr string) bool {
	i := strings.Index(stderr, "SIGSEGV")
	if i < 0 {
		return false
	}
	rest := stderr[i:]
	j := strings.Index(rest, "\ngoroutine ")
	if j < 0 {
		return false
	}
	rest = rest[j+1:]
	if k := strings.IndexByte(rest, '\n'); k >= 0 {
		return strings.HasPrefix(rest[k+1:], "runtime.")
	}
	return false
}

// lastLine is the first line of the last fatal error in stderr, or its
// last line.
func lastLine(s string) string {
	if i := strings.Index(s, "fatal error:"); i >= 0 {
		s = s[i:]
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			s = s[:j]
		}
		return s
	}
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "(it wrote nothing)"
	}
	return s
}

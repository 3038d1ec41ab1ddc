//go:build linux

package server

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubelinux/cube/server/internal/resp"
	"golang.org/x/sys/unix"
)

// loop serves Unix socket connections from one goroutine waiting on all of
// them with epoll, as redis-server does, instead of a goroutine each: at
// one request per round trip a goroutine per connection pays a park and a
// wake-up per request, which cost more CPU than GET itself (see
// server/bench/connmodel.sh and RATIONALE.md).
//
// The loop runs only Fast commands. Writes commit without waiting for the
// log (Namespace.UpdateDeferred) and their replies, with every reply after
// them on the connection, wait in the connection's buffer until the log
// is durable up to them. Once the loop has run what every ready
// connection sent, it writes and syncs the log itself (DB.SyncHere), as
// redis-server does before it sleeps, so that every write gathered in the
// round shares one sync and no other goroutine has to be woken for it. The
// first command that is not Fast, or a write that has waited maxBusyWait
// for another transaction (a program running on the namespace), hands the
// connection to a goroutine, so that slow commands, which watch for the
// client going away and may take seconds, never stall the loop; the
// goroutine gives it back at its next batch of Fast commands
// (backToLoop).
type loop struct {
	s   *Server
	ctx context.Context
	ep  int // epoll
	efd int // eventfd: wakes epoll_wait

	conns map[int32]*conn // by fd; the loop's own
	held  []*conn         // connections whose replies wait for the log
	busy  []*conn         // connections whose next write found its namespace held
	tick  time.Duration   // how often deadlines are checked
	now   time.Time       // when the round began: what it reads arrived by then
	cmds  [][][]byte      // parsed commands, reused
	ends  []int           // where each parsed command ends in lc.in

	mu      sync.Mutex
	added   []*conn // accepted, not yet in epoll
	drain   bool    // stop reading; close each connection once it is done
	killed  bool    // close everything now
	stopped bool    // efd is closed
	woken   atomic.Bool
	failed  error         // the log failed while replies waited (the loop's own)
	done    chan struct{} // closed when run returns
}

// loopConn is a connection's state while the loop serves it.
type loopConn struct {
	fd      int
	in      []byte    // bytes read and not yet run
	events  uint32    // the epoll interest set
	out     int       // bytes of c.w.B already written
	blocked time.Time // when the unwritten replies first met a full socket
	pending time.Time // when the partial request at the front of in began
	last    time.Time // the last read, for the idle timeout
	isHeld  bool      // in loop.held
	isBusy  bool      // in loop.busy
	busy    time.Time // when the write at the front first found its namespace held
	eof     bool      // the client shut down its writing side
	closing bool      // close once the replies are written (QUIT, a bad request)
	gone    bool      // closed or handed to a goroutine
	stats   []doneCmd // commands whose replies are in c.w, for the statistics
	began   time.Time // the round's start, its commands' (see conn.clock)
}

// newLoop starts the event loop for s, or returns nil if epoll is not
// available (the goroutine per connection serves then).
func newLoop(s *Server, ctx context.Context) *loop {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		s.o.Logger.Warn("event loop unavailable; a goroutine serves each connection", "err", err)
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		s.o.Logger.Warn("event loop unavailable; a goroutine serves each connection", "err", err)
		return nil
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		unix.Close(ep)
		unix.Close(efd)
		return nil
	}
	l := &loop{
		s: s, ctx: ctx, ep: ep, efd: efd,
		conns: map[int32]*conn{},
		done:  make(chan struct{}),
	}
	l.tick = s.o.RequestTimeout
	l.tick = min(l.tick, s.o.WriteTimeout)
	if s.o.UnixIdleTimeout > 0 {
		l.tick = min(l.tick, s.o.UnixIdleTimeout)
	}
	l.tick = min(max(l.tick/8, 5*time.Millisecond), time.Second)
	go l.run()
	return l
}

// add hands an accepted connection to the loop; false if it cannot take
// it (the caller serves it with a goroutine).
func (l *loop) add(c *conn, nc net.Conn) bool {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return false
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	fd := -1
	if cerr := rc.Control(func(f uintptr) {
		fd, err = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
	}); cerr != nil || err != nil {
		return false
	}
	// The duplicate shares the open file; closing nc takes the socket out
	// of Go's poller. The loop's raw reads rely on O_NONBLOCK.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return false
	}
	l.s.mu.Lock()
	c.nc = nil
	l.s.mu.Unlock()
	l.mu.Lock()
	if l.drain || l.killed {
		// A goroutine's connection coming back (backToLoop) while the
		// loop winds down: it stays with its goroutine, which drains it.
		// Refused under mu, so a connection added is one the loop's
		// intake sees before it can return.
		l.mu.Unlock()
		unix.Close(fd)
		l.s.mu.Lock()
		c.nc = nc
		l.s.mu.Unlock()
		return false
	}
	nc.Close()
	c.lc = &loopConn{fd: fd, in: make([]byte, 0, 16<<10), last: time.Now()}
	l.added = append(l.added, c)
	l.mu.Unlock()
	l.wake()
	return true
}

// wake makes epoll_wait return (at most one pending wake-up).
func (l *loop) wake() {
	if l.woken.CompareAndSwap(false, true) {
		var one = [8]byte{1}
		l.mu.Lock()
		if !l.stopped {
			rawWrite(l.efd, one[:])
		}
		l.mu.Unlock()
	}
}

// startDrain stops reading; each connection is closed once the commands it
// has already received have run and their replies are written.
func (l *loop) startDrain() {
	l.mu.Lock()
	l.drain = true
	l.mu.Unlock()
	l.wake()
}

// kill closes every connection now (the drain ran out of time).
func (l *loop) kill() {
	l.mu.Lock()
	l.killed = true
	l.mu.Unlock()
	l.wake()
}

// wait returns once the loop has closed every connection and stopped.
func (l *loop) wait() {
	<-l.done
	l.mu.Lock()
	if !l.stopped {
		l.stopped = true
		unix.Close(l.efd)
	}
	l.mu.Unlock()
}

func (l *loop) run() {
	defer close(l.done)
	defer unix.Close(l.ep)
	evs := make([]unix.EpollEvent, 256)
	next := time.Now().Add(l.tick)
	for {
		// What is ready now, else wait until something is or the next
		// deadline check (RATIONALE.md says why not Go's poller).
		n, err := pollNow(l.ep, evs)
		if n == 0 && err == nil && len(l.held) == 0 {
			ms := int(max(time.Until(next), 0)/time.Millisecond) + 1
			if len(l.busy) > 0 {
				ms = 1 // retry them soon
			}
			n, err = unix.EpollWait(l.ep, evs, ms)
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			l.s.o.Logger.Error("event loop: epoll_wait", "err", err)
			l.closeAll()
			return
		}
		l.now = time.Now()
		for _, e := range evs[:max(n, 0)] {
			if e.Fd == int32(l.efd) {
				// Drain, then allow the next wake-up: the other order
				// lets a wake-up between the two be drained with this one
				// and leaves woken set with nothing to wake the loop.
				var b [8]byte
				rawRead(l.efd, b[:])
				l.woken.Store(false)
				continue
			}
			c := l.conns[e.Fd]
			if c == nil {
				continue
			}
			if e.Events&unix.EPOLLOUT != 0 {
				l.write(c)
			}
			if !c.lc.gone && e.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				l.read(c)
			}
		}
		if stop := l.intake(); stop {
			return
		}
		l.retryBusy()
		l.syncHeld()
		l.release()
		if now := time.Now(); !now.Before(next) {
			l.sweep(now)
			next = now.Add(l.tick)
		}
	}
}

// intake registers accepted connections and applies drain and kill; true
// when the loop should return.
func (l *loop) intake() bool {
	l.mu.Lock()
	added, drain, killed := l.added, l.drain, l.killed
	l.added = nil
	l.mu.Unlock()
	for _, c := range added {
		c.lc.events = unix.EPOLLIN
		if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, c.lc.fd, &unix.EpollEvent{Events: c.lc.events, Fd: int32(c.lc.fd)}); err != nil {
			l.s.o.Logger.Warn("event loop: epoll_ctl", "err", err)
			unix.Close(c.lc.fd)
			c.lc.gone = true
			l.s.forget(c)
			continue
		}
		l.conns[int32(c.lc.fd)] = c
		if drain {
			l.step(c)
		}
	}
	if killed {
		l.closeAll()
		return true
	}
	if drain {
		for _, c := range l.conns {
			if !c.lc.closing {
				c.lc.closing = true
				l.step(c)
			}
		}
		return len(l.conns) == 0
	}
	return false
}

// read reads what the client sent and runs it.
func (l *loop) read(c *conn) {
	lc := c.lc
	if len(lc.in) == cap(lc.in) {
		// A request larger than the buffer; Parse bounds it (MaxRequest).
		nb := make([]byte, len(lc.in), 2*cap(lc.in))
		copy(nb, lc.in)
		lc.in = nb
	}
	n, err := rawRead(lc.fd, lc.in[len(lc.in):cap(lc.in)])
	switch {
	case n > 0:
		lc.in = lc.in[:len(lc.in)+n]
		lc.last = l.now
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return
	case n == 0 && err == nil:
		// End of stream: the client may still read (a half-close, as
		// `nc -N` does); it gets the replies to what it sent.
		lc.eof = true
		lc.closing = true
	default:
		l.close(c)
		return
	}
	l.step(c)
}

// step runs what the connection has received, as far as its replies let
// it, and writes or holds the replies.
func (l *loop) step(c *conn) {
	lc := c.lc
	for !lc.gone {
		ran := l.process(c)
		if lc.gone {
			return
		}
		if c.w.Len() > 0 {
			if !l.s.db.Durable(c.until) {
				l.hold(c)
				break
			}
			if !l.write(c) {
				return
			}
		}
		if !ran || !lc.blocked.IsZero() {
			break
		}
	}
	if lc.gone {
		return
	}
	if lc.closing && c.w.Len() == 0 && !l.complete(c) {
		l.close(c)
		return
	}
	l.interest(c)
}

// complete reports whether lc.in starts with a whole request.
func (l *loop) complete(c *conn) bool {
	if len(c.lc.in) == 0 || c.quit {
		return false
	}
	n, _, err := resp.Parse(c.lc.in, nil, c.lim)
	return n > 0 || err != nil
}

// maxLoopBatch bounds the commands run for one connection before the
// loop turns to the others.
const maxLoopBatch = 512

// process parses and runs the complete commands at the front of lc.in
// while the replies waiting are under flushAt and none is being written;
// it reports whether it ran any.
func (l *loop) process(c *conn) bool {
	lc := c.lc
	if !lc.blocked.IsZero() || c.w.Len() > flushAt || c.quit {
		return false
	}
	start, k := 0, 0
	l.ends = l.ends[:0]
	slow := false
	var perr error
	for k < maxLoopBatch {
		var a [][]byte
		if k < len(l.cmds) {
			a = l.cmds[k]
		}
		n, a, err := resp.Parse(lc.in[start:], a, c.lim)
		if k < len(l.cmds) {
			l.cmds[k] = a
		} else {
			l.cmds = append(l.cmds, a)
		}
		if err != nil {
			perr = err
			break
		}
		if n == 0 {
			break
		}
		if len(a) == 0 {
			start += n
			continue
		}
		if cmd := c.lookup(a[0]); cmd != nil && cmd.Flags&Fast == 0 {
			slow = true
			break
		}
		start += n
		l.ends = append(l.ends, start)
		k++
	}
	ran, busy := 0, false
	if k > 0 {
		lc.began = l.now
		ran, busy = c.runBatch(l.ctx, l.cmds[:k])
		if ran < k {
			// Stopped early: the rest is parsed again next time.
			start, perr, slow = 0, nil, busy
			if ran > 0 {
				start = l.ends[ran-1]
			}
		}
	}
	if perr != nil {
		l.s.stats.protoErrors.Add(1)
		c.w.Error("ERR " + c.protoText(perr) + "; closing the connection")
		c.quit = true
	}
	lc.in = lc.in[:copy(lc.in, lc.in[start:])]
	if start > 0 {
		lc.pending = time.Time{}
	}
	if len(lc.in) > 0 && lc.pending.IsZero() && !slow {
		lc.pending = time.Now()
	}
	if c.quit {
		lc.closing = true
		lc.in = lc.in[:0]
	}
	if cap(lc.in) > 64<<10 && len(lc.in) == 0 {
		lc.in = make([]byte, 0, 16<<10)
	}
	if ran > 0 {
		lc.busy = time.Time{}
	}
	if busy && !l.handOffBusy(c) {
		slow = false
	}
	if slow {
		l.handOff(c)
	}
	return ran > 0 || start > 0
}

// maxBusyWait is how long the loop goes on retrying a write whose
// namespace another transaction holds before it hands the connection to
// a goroutine, which can wait. Another connection's commit holds it for
// microseconds, but a retry comes a round later, and a round includes
// the loop's own log sync (2-3 ms were seen); a retry costs a TryLock,
// so the bound is generous. A program that runs longer than this moves
// the writer to a goroutine as before.
const maxBusyWait = 50 * time.Millisecond

// handOffBusy decides for a connection whose next write found its namespace
// held: true hands it to a goroutine, false keeps it in the loop to be
// retried next round. A goroutine connection's write holds a namespace
// only for its commit; were every write that met one handed off, the
// loop's connections would leave it one by one under a mixed load.
func (l *loop) handOffBusy(c *conn) bool {
	lc := c.lc
	now := time.Now()
	if lc.busy.IsZero() {
		lc.busy = now
	}
	if now.Sub(lc.busy) >= maxBusyWait {
		return true
	}
	if !lc.isBusy {
		lc.isBusy = true
		l.busy = append(l.busy, c)
	}
	return false
}

// retryBusy runs again the connections whose write found its namespace
// held.
func (l *loop) retryBusy() {
	if len(l.busy) == 0 {
		return
	}
	busy := l.busy
	l.busy = nil
	for _, c := range busy {
		if c.lc == nil || c.lc.gone {
			continue
		}
		c.lc.isBusy = false
		l.step(c)
	}
}

// hold keeps the connection's replies until the log is durable up to
// c.until: the loop syncs it before it next waits for events.
func (l *loop) hold(c *conn) {
	if !c.lc.isHeld {
		c.lc.isHeld = true
		l.held = append(l.held, c)
	}
	l.interest(c)
}

// syncHeld makes the log durable up to every held reply, on the loop's
// own thread: the clients are waiting for that and nothing else.
func (l *loop) syncHeld() {
	if len(l.held) == 0 || l.failed != nil {
		return
	}
	if err := l.s.db.SyncHere(); err != nil {
		l.failed = err
	}
}

// release writes the held replies the log has made durable.
func (l *loop) release() {
	if len(l.held) == 0 {
		return
	}
	failed := l.failed
	held := l.held
	l.held = nil
	var still []*conn
	for _, c := range held {
		if c.lc == nil || c.lc.gone {
			continue // closed or handed to a goroutine meanwhile
		}
		c.lc.isHeld = false
		switch {
		case l.s.db.Durable(c.until):
			l.step(c)
		case failed != nil:
			// The replies may say OK to writes the log lost: the client
			// gets the failure instead, and the connection is closed.
			c.w.Reset()
			c.w.Error(errorText(failed) + "; closing the connection")
			c.until = 0
			c.lc.closing = true
			l.write(c)
			if !c.lc.gone {
				l.close(c)
			}
		default:
			c.lc.isHeld = true
			still = append(still, c)
		}
	}
	l.held = append(still, l.held...)
}

// write writes the connection's replies; false if the connection was
// closed. On a full socket it waits for EPOLLOUT.
func (l *loop) write(c *conn) bool {
	lc := c.lc
	for lc.out < c.w.Len() {
		n, err := rawWrite(lc.fd, c.w.B[lc.out:])
		if n > 0 {
			lc.out += n
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			if lc.blocked.IsZero() {
				lc.blocked = time.Now()
			}
			l.interest(c)
			return true
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		l.close(c)
		return false
	}
	lc.out = 0
	lc.blocked = time.Time{}
	if len(lc.stats) > 0 {
		recordDone(l.s.stats, lc.stats, time.Now())
		lc.stats = lc.stats[:0]
	}
	if cap(c.w.B) > 4*flushAt {
		c.w.B = nil
	}
	c.w.Reset()
	c.until = 0
	if lc.closing && !l.complete(c) {
		l.close(c)
		return false
	}
	l.interest(c)
	return true
}

// interest sets what epoll reports for the connection: readable while it
// may run more, writable while replies wait for room, nothing otherwise.
// Nothing means out of the epoll set, since epoll reports a hang-up
// whatever the set asks, and a client that closed while its replies wait
// for the log must not wake the loop again and again; the write after
// the wait finds it gone.
func (l *loop) interest(c *conn) {
	lc := c.lc
	if lc.gone {
		return
	}
	var ev uint32
	if !lc.blocked.IsZero() {
		ev = unix.EPOLLOUT
	} else if !lc.closing && !lc.eof && c.w.Len() <= flushAt {
		ev = unix.EPOLLIN
	}
	if ev == lc.events {
		return
	}
	op := unix.EPOLL_CTL_MOD
	switch {
	case ev == 0:
		op = unix.EPOLL_CTL_DEL
	case lc.events == 0:
		op = unix.EPOLL_CTL_ADD
	}
	lc.events = ev
	rawEpollCtl(l.ep, op, lc.fd, &unix.EpollEvent{Events: ev, Fd: int32(lc.fd)})
}

// sweep enforces the deadlines: a request not completed within
// RequestTimeout, replies not read within WriteTimeout, a connection idle
// past UnixIdleTimeout.
func (l *loop) sweep(now time.Time) {
	o := &l.s.o
	for _, c := range l.conns {
		lc := c.lc
		switch {
		case !lc.blocked.IsZero() && now.Sub(lc.blocked) > o.WriteTimeout:
			l.s.stats.timedOut.Add(1)
			l.close(c)
		case !lc.pending.IsZero() && now.Sub(lc.pending) > o.RequestTimeout:
			l.timeout(c, requestDeadline)
		case c.idle > 0 && lc.pending.IsZero() && c.w.Len() == 0 && !lc.closing && now.Sub(lc.last) > c.idle:
			l.timeout(c, idleDeadline)
		}
	}
}

// timeout tells the client which limit closed its connection and closes
// it (replies still waiting for the log are dropped, as the goroutine's
// read deadline drops them).
func (l *loop) timeout(c *conn, kind deadlineKind) {
	l.s.stats.timedOut.Add(1)
	c.rdlFor = kind
	c.w.Reset()
	c.lc.out = 0
	c.w.Error(c.timeoutText())
	c.until = 0
	c.lc.closing, c.lc.in = true, c.lc.in[:0]
	if l.write(c) && !c.lc.gone {
		l.close(c)
	}
}

// detach takes the connection out of the loop, its descriptor still open.
func (l *loop) detach(c *conn) {
	lc := c.lc
	lc.gone = true
	if lc.events != 0 {
		unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, lc.fd, nil)
	}
	delete(l.conns, int32(lc.fd))
}

// close closes the connection and forgets it.
func (l *loop) close(c *conn) {
	if c.lc.gone {
		return
	}
	l.detach(c)
	unix.Close(c.lc.fd)
	c.closeSession()
	l.s.forget(c)
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		l.close(c)
	}
	l.mu.Lock()
	added := l.added
	l.added = nil
	l.mu.Unlock()
	for _, c := range added {
		unix.Close(c.lc.fd)
		l.s.forget(c)
	}
}

// handOff gives the connection to a goroutine: its next command is not
// Fast, or its write has waited maxBusyWait for another writer. The
// goroutine first sends the replies the loop holds, once they are
// durable, and gives the connection back once it has run a batch of Fast
// commands and nothing more waits (see backToLoop).
func (l *loop) handOff(c *conn) {
	lc := c.lc
	l.detach(c)
	f := os.NewFile(uintptr(lc.fd), "cube-conn")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		l.s.o.Logger.Warn("event loop: hand a connection to a goroutine", "err", err)
		c.closeSession()
		l.s.forget(c)
		return
	}
	buf, until, stats := lc.in, c.until, lc.stats
	c.lc = nil
	c.until = 0
	l.s.mu.Lock()
	c.nc = nc
	l.s.mu.Unlock()
	l.s.stats.handedOff.Add(1)
	go func() {
		back := false // the connection went back to the loop
		defer func() {
			if !back {
				l.s.forget(c)
			}
		}()
		ctx := l.ctx
		if c.w.Len() > 0 {
			if err := l.s.db.WaitDurable(ctx, until); err != nil {
				for i := range stats {
					stats[i].failed = true
				}
				recordDone(c.s.stats, stats, time.Now())
				c.w.Reset()
				c.w.Error(errorText(err) + "; closing the connection")
				c.flush()
				c.closeSession()
				nc.Close()
				return
			}
		}
		ok := c.flush()
		// The held replies' commands count once they are written, as in
		// the loop.
		recordDone(c.s.stats, stats, time.Now())
		if !ok {
			c.closeSession()
			nc.Close()
			return
		}
		back = c.serve(ctx, buf)
	}()
}

package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// maxAhead bounds the bytes a watcher reads ahead of the command loop
// (a pipelined request sent while a command runs). Past it the watcher
// stops reading, so the client is held back by the socket as before; it
// then no longer notices a close until the command ends.
const maxAhead = 64 << 10

// longAgo is a read deadline in the past: it wakes a blocked Read.
var longAgo = time.Unix(1, 0)

// watched reports whether cmd may run long enough that it should be
// cancelled when its client goes away: every command not marked Fast
// (programs, scripts, region queries, walks). Fast commands are not
// watched, so that a pipeline of GETs and PUTs pays nothing for it.
func watched(cmd *Command) bool { return cmd.Flags&Fast == 0 }

// watchAfter is how long a command runs before its connection is
// watched: a person's Ctrl-C does not need it sooner, and the many short
// runs (a stress test's RUNs) pay only for a timer reset.
const watchAfter = 2 * time.Millisecond

// watcher is a connection's state for watching it during a command; it is
// reused from command to command.
type watcher struct {
	timer  *time.Timer        // runs arm after watchAfter
	cancel context.CancelFunc // cancels the connection's context

	// ran is done when a scheduled arm has returned (or will not run),
	// so that no arm outlives its command.
	ran sync.WaitGroup

	mu      sync.Mutex
	stopped bool // the command ended
	armed   bool // arm is reading the connection
	gone    bool // the peer closed; read after ran
}

// watch has the connection watched while a command runs: the connection's
// context (the command's) is cancelled if the client closes the
// connection meanwhile. RESP has no other way to interrupt a command:
// redis-cli and cube's REPL close the connection on Ctrl-C. Once the
// command has run for watchAfter, a goroutine reads the socket; the bytes
// it reads (a pipelined request) are kept in c.ahead for the command loop,
// and only an end of stream or a broken connection cancels. A unix-socket
// client that only shut down its writing side (`nc -N`) is still
// listening, so its command runs on and it gets its reply.
//
// If watch returns true, unwatch must be called when the command ends,
// before the connection is read again.
func (c *conn) watch() bool {
	if c.peerEOF {
		return false
	}
	w := &c.wt
	w.mu.Lock()
	w.stopped, w.armed, w.gone = false, false, false
	w.mu.Unlock()
	w.ran.Add(1)
	if w.timer == nil {
		w.timer = time.AfterFunc(watchAfter, c.arm)
	} else {
		w.timer.Reset(watchAfter)
	}
	return true
}

// unwatch ends watch and reports whether the client closed the
// connection (and the command's context was cancelled).
func (c *conn) unwatch() bool {
	w := &c.wt
	if w.timer.Stop() {
		w.ran.Done() // arm will not run
		return false
	}
	w.mu.Lock()
	w.stopped = true
	armed := w.armed
	w.mu.Unlock()
	if armed {
		c.nc.SetReadDeadline(longAgo)
		// The read loop sets the deadline it needs from c.rdl.
		c.rdl = longAgo
	}
	w.ran.Wait() // an arm not yet armed sees stopped and returns
	return w.gone
}

// arm starts reading the connection while a long command runs (from
// watch's timer).
func (c *conn) arm() {
	w := &c.wt
	defer w.ran.Done()
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.armed = true
	// The command loop does not touch the connection until unwatch, which
	// waits for ran.
	c.nc.SetReadDeadline(time.Time{})
	w.mu.Unlock()
	for len(c.ahead) < maxAhead {
		if cap(c.ahead)-len(c.ahead) < 4<<10 {
			nb := make([]byte, len(c.ahead), 2*cap(c.ahead)+4<<10)
			copy(nb, c.ahead)
			c.ahead = nb
		}
		n, err := c.nc.Read(c.ahead[len(c.ahead):cap(c.ahead)])
		c.ahead = c.ahead[:len(c.ahead)+n]
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return // unwatch, or the server's drain
		}
		c.peerEOF = true
		if errors.Is(err, io.EOF) && !peerClosed(c.nc) {
			return // half-closed: the client still reads
		}
		w.gone = true
		w.cancel()
		return
	}
}

// peerClosed reports whether the client at the other end of nc, whose
// reads have reached the end of the stream, has closed the connection
// rather than only shut down its writing side. Only a unix socket can
// tell the two apart (POLLHUP); over TCP both are a FIN, and an end of
// stream counts as a close, as it does for Redis.
func peerClosed(nc net.Conn) bool {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return true
	}
	return hungUp(uc)
}

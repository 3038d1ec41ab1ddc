package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
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

// watch returns a context for one command that is cancelled when the
// client closes its connection while the command runs. RESP has no other
// way to interrupt a command: redis-cli and cube's REPL close the
// connection on Ctrl-C. A goroutine reads the socket meanwhile; the bytes
// it reads (a pipelined request) are kept in c.ahead for the command loop,
// and only an end of stream or a broken connection cancels. A unix-socket
// client that only shut down its writing side (`nc -N`) is still
// listening, so its command runs on and it gets its reply.
//
// stop ends the watch and must be called before the connection is read
// again.
func (c *conn) watch(ctx context.Context) (_ context.Context, stop func() bool) {
	if c.peerEOF {
		return ctx, func() bool { return false }
	}
	ctx, cancel := context.WithCancel(ctx)
	if !c.rdl.IsZero() {
		c.rdl = time.Time{}
		c.nc.SetReadDeadline(c.rdl)
	}
	done := make(chan struct{})
	var gone bool
	go func() {
		defer close(done)
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
				return // stop, or the server's drain
			}
			c.peerEOF = true
			if errors.Is(err, io.EOF) && !peerClosed(c.nc) {
				return // half-closed: the client still reads
			}
			gone = true
			cancel()
			return
		}
	}()
	return ctx, func() bool {
		c.nc.SetReadDeadline(longAgo)
		<-done
		// The read loop sets the deadline it needs from c.rdl.
		c.rdl = longAgo
		cancel()
		return gone
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

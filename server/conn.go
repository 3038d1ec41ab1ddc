package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"time"
	"weak"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server/internal/resp"
)

// flushAt is the reply size at which a pipeline's replies are written
// before the rest of the pipeline runs, so one client's big pipeline does
// not pile up memory.
const flushAt = 1 << 20

// conn is one client connection. Its goroutine reads, runs and replies;
// nothing else touches it but Serve's drain (deadlines, Close).
type conn struct {
	s      *Server
	nc     net.Conn
	id     int64
	tcp    bool
	authed bool
	quit   bool
	name   string
	w      resp.Writer
	cmds   [][][]byte
	lim    resp.Limits
	// rdl and wdl are the deadlines last set on nc; rdlFor says which
	// limit rdl enforces.
	rdl, wdl time.Time
	rdlFor   deadlineKind
	// authBy is when an unauthenticated TCP connection is closed.
	authBy time.Time
	// idle is the connection's idle timeout (0: none).
	idle time.Duration
	// session is the per-connection JavaScript state for EVAL.
	session any
	// ahead holds bytes a watcher read while a command ran (see watch);
	// peerEOF records that it reached the end of the stream.
	ahead   []byte
	peerEOF bool
	wt      watcher
	// lc is the connection's state while the event loop serves it (nil
	// once a goroutine does; see loop). Then writes commit without
	// waiting and until is the log position the replies in w wait for.
	lc    *loopConn
	until uint64
	// leaderReads: in cluster mode, this connection's reads are answered
	// by the leader only (CLUSTER.READS LEADER).
	leaderReads bool
	// cl is the call a command runs with (see run); items and calls are
	// runWrites'.
	cl    call
	items []writeItem
	calls []call
	// op is the write run is running; runOp and runItems are runOpTx
	// and runItemsTx as values.
	op              txOp
	runOp, runItems func(*cube.Tx) error
	// The last command and namespace this connection named (see lookup
	// and call.ns).
	cmdName []byte
	cmdHit  *Command
	nsName  []byte
	nsHit   weak.Pointer[cube.Namespace]
}

// lookup is Server.lookup with the connection's last answer kept: a
// client sends one command again and again, and each command was looked
// up three times on its way through the loop.
func (c *conn) lookup(name []byte) *Command {
	if c.cmdHit != nil && string(name) == string(c.cmdName) {
		return c.cmdHit
	}
	cmd := c.s.lookup(name)
	if cmd != nil {
		c.cmdName, c.cmdHit = append(c.cmdName[:0], name...), cmd
	}
	return cmd
}

// deadlineKind names the limit a read deadline enforces, for the message
// a client gets when it expires.
type deadlineKind uint8

const (
	noDeadline deadlineKind = iota
	idleDeadline
	requestDeadline
	authDeadline
)

func newConn(s *Server, nc net.Conn, tcp bool) *conn {
	c := &conn{
		s:      s,
		nc:     nc,
		id:     s.nextID.Add(1),
		tcp:    tcp,
		authed: !tcp,
		lim:    resp.Limits{MaxRequest: s.o.MaxRequest},
		w:      resp.Writer{Proto: 2},
		idle:   s.o.UnixIdleTimeout,
	}
	c.runOp, c.runItems = c.runOpTx, c.runItemsTx
	if tcp {
		c.idle = s.o.IdleTimeout
		c.authBy = time.Now().Add(s.o.AuthTimeout)
		c.lim = resp.Limits{MaxRequest: maxPreAuthRequest, MaxArgs: maxPreAuthArgs}
	}
	return c
}

// serve reads, runs and replies until the connection ends, or until it
// goes back to the event loop (true; see backToLoop). buf holds bytes
// already read (from the event loop), or is nil.
func (c *conn) serve(ctx context.Context, buf []byte) (back bool) {
	// The connection's context is cancelled when the client closes the
	// connection while a long command runs (see watch).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.wt.cancel = cancel
	nc := c.nc
	defer func() {
		if !back {
			nc.Close()
			c.closeSession()
		}
	}()
	bufSize := 16 << 10
	if !c.authed {
		// A stranger's requests are small; see maxPreAuthRequest.
		bufSize = maxPreAuthRequest
	}
	if cap(buf) < bufSize {
		buf = append(make([]byte, 0, bufSize), buf...)
	}
	start := 0
	// pending is when the server began waiting for the rest of the
	// request at the front of buf (zero: buf holds no partial request).
	// It is set once per request, so trickling bytes never extends the
	// request's deadline.
	var pending time.Time
	// fast: the last batch run was only Fast commands.
	fast := false
	for {
		// Run every complete command already received, in order. Before
		// AUTH they run one at a time, so that the commands after an AUTH
		// are parsed with the limits of an authenticated connection.
		k := 0
		more := false
		allFast := true
		for {
			if k > 0 && !c.authed {
				more = true
				break
			}
			var a [][]byte
			if k < len(c.cmds) {
				a = c.cmds[k]
			}
			n, a, err := resp.Parse(buf[start:], a, c.lim)
			if k < len(c.cmds) {
				c.cmds[k] = a
			} else {
				c.cmds = append(c.cmds, a)
			}
			if err != nil {
				// Run what came before the bad bytes, then say what was
				// wrong; the stream cannot be resynchronised after it.
				c.runBatch(ctx, c.cmds[:k])
				c.s.stats.protoErrors.Add(1)
				c.w.Error("ERR " + c.protoText(err) + "; closing the connection")
				c.flush()
				return
			}
			if n == 0 {
				break
			}
			start += n
			if len(a) > 0 {
				if cmd := c.lookup(a[0]); cmd == nil || cmd.Flags&Fast == 0 {
					allFast = false
				}
				k++
			}
		}
		if k > 0 {
			fast = allFast
			c.runBatch(ctx, c.cmds[:k])
			if !c.flush() {
				return
			}
		}
		if c.quit {
			return
		}
		// Keep the unparsed tail at the front of buf.
		if start > 0 {
			pending = time.Time{}
		}
		if start == len(buf) {
			buf = buf[:0]
		} else if start > 0 {
			buf = buf[:copy(buf, buf[start:])]
		}
		start = 0
		if more {
			continue
		}
		if len(c.ahead) > 0 {
			// Requests that came in while a command ran.
			buf = append(buf, c.ahead...)
			c.ahead = c.ahead[:0]
			continue
		}
		if fast && len(buf) == 0 && c.backToLoop() {
			return true
		}
		if len(buf) == cap(buf) {
			if !c.authed {
				// A stranger's request that does not fit its buffer
				// (an inline line with no end, a header announcing less
				// than it sends) is too large; nothing more is read.
				c.s.stats.protoErrors.Add(1)
				c.w.Error("ERR " + c.protoText(resp.ErrTooLarge) + "; closing the connection")
				c.flush()
				return
			}
			nb := make([]byte, len(buf), 2*cap(buf))
			copy(nb, buf)
			buf = nb
		}
		if len(buf) > 0 && pending.IsZero() {
			pending = time.Now()
		}
		c.readDeadline(pending)
		if c.s.draining.Load() {
			return
		}
		n, err := c.nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && n == 0 {
			if errors.Is(err, os.ErrDeadlineExceeded) && !c.s.draining.Load() {
				c.s.stats.timedOut.Add(1)
				c.w.Reset()
				c.w.Error(c.timeoutText())
				c.flush()
			}
			return
		}
	}
}

// backToLoop gives a Unix socket connection that a goroutine serves back
// to the event loop, which serves Fast commands for less CPU, and whose
// writes share the loop's log syncs instead of waking the log's flusher
// for their own (a connection that sent one NS.CREATE and then wrote
// stayed a goroutine's, and its syncs raced the loop's). Its caller has
// just run a batch of Fast commands and holds nothing unread: the next
// request is the loop's to read. False if there is no loop to go back
// to, or it is winding down.
func (c *conn) backToLoop() bool {
	if c.s.loop == nil || c.tcp || c.peerEOF || c.quit || c.s.draining.Load() {
		return false
	}
	// The next goroutine to serve it (another slow command) sets its
	// own deadlines on a new net.Conn.
	c.rdl, c.wdl, c.rdlFor = time.Time{}, time.Time{}, noDeadline
	// Counted first: once added, the loop may answer the client before
	// this goroutine runs again.
	c.s.stats.handedBack.Add(1)
	if !c.s.loop.add(c, c.nc) {
		c.s.stats.handedBack.Add(-1)
		return false
	}
	return true
}

// readDeadline sets the deadline of the next read: the earliest of the
// pending request's absolute deadline (or, with nothing pending, the idle
// timeout) and, before AUTH, the end of the grace to authenticate.
func (c *conn) readDeadline(pending time.Time) {
	var at time.Time
	kind := noDeadline
	switch now := time.Now(); {
	case !pending.IsZero():
		at, kind = pending.Add(c.s.o.RequestTimeout), requestDeadline
	case c.idle > 0:
		// Refreshed lazily (a timer update per command costs more than
		// a short command): the idle wait is between idle/2 and idle.
		at, kind = now.Add(c.idle), idleDeadline
		if c.rdlFor == idleDeadline && c.rdl.Sub(now) >= c.idle/2 && c.rdl.Sub(now) <= c.idle {
			at = c.rdl
		}
	}
	if !c.authed && (at.IsZero() || c.authBy.Before(at)) {
		at, kind = c.authBy, authDeadline
	}
	c.rdlFor = kind
	if !at.Equal(c.rdl) {
		c.rdl = at
		c.nc.SetReadDeadline(at)
	}
}

// timeoutText says which limit closed the connection.
func (c *conn) timeoutText() string {
	switch c.rdlFor {
	case authDeadline:
		return "NOAUTH not authenticated within " + c.s.o.AuthTimeout.String() + " of connecting; closing the connection (send AUTH <token> first)"
	case requestDeadline:
		return "ERR request not completed within " + c.s.o.RequestTimeout.String() + "; closing the connection"
	}
	return "ERR idle for " + c.idle.String() + "; closing the connection"
}

// protoText describes a protocol error, saying which limit a request
// broke.
func (c *conn) protoText(err error) string {
	if !c.authed && errors.Is(err, resp.ErrTooLarge) {
		return "request too large: before AUTH a request may have at most " +
			strconv.Itoa(maxPreAuthRequest) + " bytes and " + strconv.Itoa(maxPreAuthArgs) + " arguments"
	}
	return protoText(err)
}

// flush writes the pending replies; false if the client is gone or too
// slow to read them.
func (c *conn) flush() bool {
	if c.w.Len() == 0 {
		return true
	}
	// Deadlines are refreshed lazily (a timer update per reply costs
	// more than the reply): a write may get between half and all of
	// WriteTimeout.
	wdl := c.wdl
	if now := time.Now(); wdl.Sub(now) < c.s.o.WriteTimeout/2 {
		wdl = now.Add(c.s.o.WriteTimeout)
	}
	if !c.authed {
		// A stranger that does not read its replies is not kept past
		// its grace (and a second to read why it is closed).
		if end := c.authBy.Add(time.Second); end.Before(wdl) {
			wdl = end
		}
	}
	if !wdl.Equal(c.wdl) {
		c.wdl = wdl
		c.nc.SetWriteDeadline(wdl)
	}
	_, err := c.nc.Write(c.w.B)
	if cap(c.w.B) > 4*flushAt {
		c.w.B = nil
	}
	c.w.Reset()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.s.stats.timedOut.Add(1)
		}
		return false
	}
	return true
}

// runBatch runs a pipeline's commands in order. Consecutive writes to one
// namespace (PUT, DEL, LINK, UNLINK) commit as one transaction, so that a
// pipeline of N writes costs one log sync instead of N; their replies,
// like every write's, are written only after the commit is durable.
//
// Under the event loop it returns early, with the number of commands
// run: when the replies pass flushAt (the loop writes them and comes
// back), or when a write would wait for another transaction (busy: the
// command at ran did not run; the loop retries it, or hands the
// connection to a goroutine).
func (c *conn) runBatch(ctx context.Context, cmds [][][]byte) (ran int, busy bool) {
	for i := 0; i < len(cmds); {
		cmd := c.lookup(cmds[i][0])
		if cmd != nil && cmd.prep != nil && c.authed {
			j := i + 1
			for j < len(cmds) && len(cmds[i]) > 1 && len(cmds[j]) > 1 &&
				bytes.Equal(cmds[j][1], cmds[i][1]) {
				if nc := c.lookup(cmds[j][0]); nc == nil || nc.prep == nil {
					break
				}
				j++
			}
			if j-i > 1 {
				if c.runWrites(ctx, cmds[i:j]) {
					return i, true
				}
				i = j
				if c.lc != nil && c.w.Len() > flushAt {
					return i, false
				}
				continue
			}
		}
		if c.run(ctx, cmd, cmds[i]) {
			return i, true
		}
		i++
		if c.lc != nil && c.w.Len() > flushAt {
			return i, false
		}
		if c.w.Len() > flushAt && !c.flush() {
			c.quit = true
		}
		if c.quit {
			return i, false
		}
	}
	return len(cmds), false
}

// update commits a command's write: under the event loop without waiting
// (the reply waits in w until c.until is durable), else as ns.Update.
func (c *conn) update(ctx context.Context, ns *cube.Namespace, fn func(*cube.Tx) error) error {
	if c.lc == nil {
		return ns.Update(ctx, fn)
	}
	until, err := ns.UpdateDeferred(fn)
	c.until = max(c.until, until)
	return err
}

// get reads a value: under the event loop without waiting (the reply
// waits in w until what the read saw is durable), else as ns.Get.
func (c *conn) get(ctx context.Context, ns *cube.Namespace, at []int32) ([]byte, error) {
	if c.lc == nil {
		return ns.Get(ctx, at)
	}
	v, until, err := ns.GetDeferred(at)
	c.until = max(c.until, until)
	return v, err
}

// run runs one command and appends its reply. It reports busy, having
// done nothing, when the event loop's write would wait (see runBatch).
func (c *conn) run(ctx context.Context, cmd *Command, args [][]byte) (busy bool) {
	start := c.clock()
	if cmd == nil && !c.authed {
		// A stranger is not told which commands exist.
		c.w.Error(errorText(errNoAuth))
		return false
	}
	if cmd == nil {
		c.s.stats.unknown.Add(1)
		c.w.Error(unknownText(args))
		return false
	}
	if err := c.check(cmd, args); err != nil {
		c.w.Error(errorText(err))
		c.record(cmd, start, true)
		return false
	}
	watching := watched(cmd) && c.watch()
	// The connection's own call, reused: one allocation less per
	// command. Nothing keeps it past the command (a write's op runs
	// before update returns).
	cl := &c.cl
	*cl = call{ctx: ctx, s: c.s, c: c, cmd: cmd, args: args, w: &c.w}
	mark := c.w.Len()
	var err error
	if cmd.prep != nil {
		var op txOp
		var ns *cube.Namespace
		ns, op, err = cmd.prep(cl)
		if err == nil {
			c.op = op
			err = c.update(ctx, ns, c.runOp)
			c.op = nil
			if errors.Is(err, cube.ErrBusy) {
				c.w.B = c.w.B[:mark]
				return true
			}
		}
	} else {
		err = cmd.run(cl)
	}
	if err != nil {
		c.w.B = c.w.B[:mark]
		c.w.Error(errorText(err))
	}
	c.record(cmd, start, err != nil)
	if watching && c.unwatch() {
		c.peerGone(cmd, time.Since(start))
	}
	return false
}

// runOp and runItems are what a write's transaction runs: c.op with the
// connection's call (run), or c.items (runWrites). Methods taken as
// values once, in newConn: a closure made for each command was an
// allocation per write.
func (c *conn) runOpTx(tx *cube.Tx) error { return c.op(&c.cl, tx) }

func (c *conn) runItemsTx(tx *cube.Tx) error {
	for _, it := range c.items {
		if it.err != nil {
			c.w.Error(errorText(it.err))
			continue
		}
		// A failed op (a value over the limit, say) changed nothing;
		// the others still commit.
		m := c.w.Len()
		if err := it.op(it.cl, tx); err != nil {
			if isFatal(err) {
				return err
			}
			c.w.B = c.w.B[:m]
			c.w.Error(errorText(err))
		}
	}
	return nil
}

// writeItem is one write of runWrites' transaction.
type writeItem struct {
	cmd *Command
	cl  *call
	op  txOp
	err error
}

// runWrites runs consecutive writes to one namespace as one transaction;
// busy as for run.
func (c *conn) runWrites(ctx context.Context, cmds [][][]byte) (busy bool) {
	start := c.clock()
	// The connection's items and calls, reused from batch to batch: no
	// op keeps its call past the transaction.
	c.items = slices.Grow(c.items[:0], len(cmds))[:len(cmds)]
	c.calls = slices.Grow(c.calls[:0], len(cmds))[:len(cmds)]
	items := c.items
	defer func() { clear(c.items); clear(c.calls) }()
	var ns *cube.Namespace
	ops := 0
	for k, args := range cmds {
		cmd := c.lookup(args[0])
		items[k] = writeItem{cmd: cmd}
		if err := c.check(cmd, args); err != nil {
			items[k].err = err
			continue
		}
		cl := &c.calls[k]
		*cl = call{ctx: ctx, s: c.s, c: c, cmd: cmd, args: args, w: &c.w}
		n, op, err := cmd.prep(cl)
		items[k].cl, items[k].op, items[k].err = cl, op, err
		if err == nil {
			ns = n
			ops++
		}
	}
	mark := c.w.Len()
	var err error
	if ops > 0 {
		err = c.update(ctx, ns, c.runItems)
	} else {
		for _, it := range items {
			c.w.Error(errorText(it.err))
		}
	}
	if errors.Is(err, cube.ErrBusy) {
		c.w.B = c.w.B[:mark]
		return true
	}
	if err != nil {
		c.w.B = c.w.B[:mark]
	}
	for _, it := range items {
		if err != nil {
			if it.err != nil {
				c.w.Error(errorText(it.err))
			} else {
				c.w.Error(errorText(err))
			}
		}
		c.record(it.cmd, start, err != nil || it.err != nil)
	}
	return false
}

// record counts a command in the statistics: now, or under the event loop
// once its reply is written (after the log sync it waits for), so that a
// write's latency includes its durability either way.
func (c *conn) record(cmd *Command, start time.Time, failed bool) {
	if c.lc != nil {
		c.lc.stats = append(c.lc.stats, doneCmd{cmd, start, failed})
		return
	}
	c.s.stats.record(cmd, time.Since(start), failed)
}

// clock is when a command starts, for its latency. Under the event loop
// it is when the loop's round began (its bytes had arrived by then),
// which every command read in the round shares: one clock read per round
// instead of one per command was a tenth of a pipelined GET's CPU on a
// VM.
func (c *conn) clock() time.Time {
	if c.lc != nil {
		return c.lc.began
	}
	return time.Now()
}

// recordDone counts commands whose replies left at now. A run of one
// command with one start (a pipeline's) counts at once.
func recordDone(st *serverStats, done []doneCmd, now time.Time) {
	for i := 0; i < len(done); {
		d := done[i]
		j, failed := i, int64(0)
		for ; j < len(done) && done[j].cmd == d.cmd && done[j].start.Equal(d.start); j++ {
			if done[j].failed {
				failed++
			}
		}
		st.recordN(d.cmd, now.Sub(d.start), int64(j-i), failed)
		i = j
	}
}

// doneCmd is a command run under the event loop whose reply is not yet
// written.
type doneCmd struct {
	cmd    *Command
	start  time.Time
	failed bool
}

// isFatal reports errors after which a transaction must not commit.
func isFatal(err error) bool {
	return errors.Is(err, cube.ErrFailed) || errors.Is(err, cube.ErrClosed) ||
		errors.Is(err, cube.ErrTxDone) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}

// check validates arity and authentication before a command runs.
func (c *conn) check(cmd *Command, args [][]byte) error {
	if !c.authed && cmd.Flags&NoAuth == 0 {
		return errNoAuth
	}
	if !cmd.arityOK(len(args)) {
		return cmd.arityError()
	}
	return c.clusterCheck(cmd, args)
}

// peerGone notes a client that closed its connection while cmd ran: the
// command was cancelled, and the rest of its pipeline is not run.
func (c *conn) peerGone(cmd *Command, d time.Duration) {
	c.quit = true
	c.s.stats.cancelled.Add(1)
	c.s.o.Logger.Info("client closed the connection during a command; cancelled it",
		"conn", c.id, "cmd", cmd.Name, "after", d)
}

func (c *conn) closeSession() {
	if c.wt.timer != nil {
		c.wt.timer.Stop()
	}
	if cl, ok := c.session.(interface{ Close() }); ok {
		cl.Close()
	}
}

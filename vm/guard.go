package vm

import "fmt"

// Guard counts what one run consumes against its Limits and remembers the
// first limit it breaks. Both sandboxes use it so that they report the same
// breach with the same kind and message.
//
// The first failure is sticky: once Err is non-nil the run has failed,
// whatever the program does next, and the sandbox reports Err as the run's
// error. A Guard is used by one run's goroutine only.
type Guard struct {
	lim       Limits
	hostCalls int64
	writes    int64
	output    []byte
	logs      []string
	logBytes  int
	logDrop   int
	err       *Error
}

// NewGuard returns a guard for one run under lim (zero fields take their
// defaults).
func NewGuard(lim Limits) *Guard {
	return &Guard{lim: lim.WithDefaults()}
}

// Limits returns the limits the guard enforces, defaults applied.
func (g *Guard) Limits() Limits { return g.lim }

// Err returns the first failure, or nil.
func (g *Guard) Err() *Error { return g.err }

// Fail records e as the run's failure unless one is already recorded, and
// returns the recorded failure.
func (g *Guard) Fail(e *Error) *Error {
	if g.err == nil {
		g.err = e
	}
	return g.err
}

// Call counts one call into the host. Over Limits.HostCalls it fails the
// run with KindHostCallLimit.
func (g *Guard) Call() *Error {
	g.hostCalls++
	if g.lim.HostCalls >= 0 && g.hostCalls > g.lim.HostCalls {
		return g.overCalls()
	}
	return nil
}

// overCalls is Call's failure, apart so that Call inlines into every
// host function's entry.
func (g *Guard) overCalls() *Error {
	return g.Fail(&Error{Kind: KindHostCallLimit, Msg: fmt.Sprintf("more than %d host calls", g.lim.HostCalls)})
}

// Write counts one write (put, delete, link, unlink). On a read-only run it
// fails the run with KindReadOnly; over Limits.Writes with KindWriteLimit.
// op names the write in the message.
func (g *Guard) Write(op string) *Error {
	if g.lim.ReadOnly {
		return g.Fail(&Error{Kind: KindReadOnly, Msg: op + " in a read-only program"})
	}
	g.writes++
	if g.lim.Writes >= 0 && g.writes > g.lim.Writes {
		return g.Fail(&Error{Kind: KindWriteLimit, Msg: fmt.Sprintf("more than %d writes", g.lim.Writes)})
	}
	return nil
}

// Output appends p to the run's output. Past Limits.OutputBytes it fails
// the run with KindOutputLimit and keeps nothing of p.
func (g *Guard) Output(p []byte) *Error {
	if g.lim.OutputBytes >= 0 && int64(len(g.output))+int64(len(p)) > g.lim.OutputBytes {
		return g.Fail(&Error{Kind: KindOutputLimit, Msg: fmt.Sprintf("output over %d bytes", g.lim.OutputBytes)})
	}
	g.output = append(g.output, p...)
	return nil
}

// Log keeps one line of the program's log. Lines past DefaultLogBytes in
// total are dropped and counted; the result ends with a note saying how many.
// Logging never fails a run.
func (g *Guard) Log(line string) {
	if g.logBytes+len(line) > DefaultLogBytes {
		g.logDrop++
		return
	}
	g.logBytes += len(line)
	g.logs = append(g.logs, line)
}

// Result returns what the run produced so far. The output is the guard's
// own buffer, not a copy.
func (g *Guard) Result() Result {
	logs := g.logs
	if g.logDrop > 0 {
		logs = append(logs[:len(logs):len(logs)], fmt.Sprintf("(%d log lines dropped: over %d bytes)", g.logDrop, DefaultLogBytes))
	}
	return Result{Output: g.output, Logs: logs, HostCalls: g.hostCalls, Writes: g.writes}
}

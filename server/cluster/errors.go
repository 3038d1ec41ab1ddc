package cluster

import (
	"errors"
	"fmt"
)

// Errors of cluster mode. Test for them with errors.Is.
var (
	// ErrNotLeader: a write reached a node that is not the leader. The
	// error is a *Redirect when the leader's client address is known.
	ErrNotLeader = errors.New("cluster: not the leader")
	// ErrNoLeader: no leader is known (an election is under way, or a
	// majority of the nodes is unreachable). Retry shortly.
	ErrNoLeader = errors.New("cluster: no leader")
	// ErrUnknownOutcome: this node lost leadership before it knew
	// whether a write it proposed was committed. The new leader may
	// still commit it: read before writing it again.
	ErrUnknownOutcome = errors.New("cluster: leadership lost before the write was known committed")
	// ErrBadOptions: Options missing or contradicting each other.
	ErrBadOptions = errors.New("cluster: bad options")
)

// Redirect is ErrNotLeader with where the leader takes writes. Its
// reply is "MOVED 0 host:port", the shape Redis clients follow: cube
// has no slots, so the slot is always 0 and the address is the
// leader's RESP address (cube serve --listen, or --advertise).
type Redirect struct {
	LeaderID string
	Addr     string
}

func (r *Redirect) Error() string {
	return fmt.Sprintf("cluster: not the leader; the leader is %s at %s", r.LeaderID, r.Addr)
}

func (r *Redirect) Unwrap() error { return ErrNotLeader }

// Reply implements server.Reply.
func (r *Redirect) Reply() string { return "MOVED 0 " + r.Addr }

// codeErr is an error with a Redis error code for its reply.
type codeErr struct {
	code string
	err  error
}

func (e *codeErr) Error() string { return e.err.Error() }
func (e *codeErr) Unwrap() error { return e.err }
func (e *codeErr) Reply() string { return e.code + " " + e.err.Error() }

func tryAgain(err error) error { return &codeErr{"TRYAGAIN", err} }

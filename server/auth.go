package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"time"
)

// Before a TCP connection has authenticated it is a stranger: it may run
// only the commands flagged NoAuth (PING, HELLO, AUTH, QUIT), each request
// at most maxPreAuthRequest bytes as sent (framing included) and with at
// most maxPreAuthArgs words, and it must authenticate within
// Options.AuthTimeout. The server never holds more than maxPreAuthRequest
// bytes of a stranger's input: its read buffer is that size until AUTH
// succeeds.
const (
	maxPreAuthRequest = 4 << 10
	maxPreAuthArgs    = 16
)

// authFailDelay spaces wrong tokens across the whole daemon: a failure
// waits until authFailDelay after the previous failure's turn, whichever
// connection (and whichever of AUTH and HELLO ... AUTH) it came from, so
// that guessing costs at least authFailDelay per guess however many
// connections the guesser opens. A correct token never waits.
const authFailDelay = 50 * time.Millisecond

// authGate is the daemon-wide spacing of failed authentications.
type authGate struct {
	mu   sync.Mutex
	next time.Time // when the next failure may be answered
}

// wait blocks until this failure's turn, or until stop is closed. If the
// turn would come after by (not zero), it does not wait and returns false.
func (g *authGate) wait(by time.Time, stop <-chan struct{}) bool {
	g.mu.Lock()
	turn := time.Now()
	if g.next.After(turn) {
		turn = g.next
	}
	turn = turn.Add(authFailDelay)
	if !by.IsZero() && turn.After(by) {
		g.mu.Unlock()
		return false
	}
	g.next = turn
	g.mu.Unlock()
	t := time.NewTimer(time.Until(turn))
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	}
	return true
}

// tokenDigest is what a token is compared by: comparing fixed-size
// digests in constant time looks at every byte of both tokens and tells a
// guesser nothing of the real token's length or its prefix (a plain
// ConstantTimeCompare returns early on a length mismatch).
func tokenDigest(tok []byte) [sha256.Size]byte { return sha256.Sum256(tok) }

// checkToken reports whether tok is the daemon's token. A daemon without
// a token accepts none (its Unix socket needs none).
func (s *Server) checkToken(tok []byte) bool {
	if s.o.AuthToken == "" {
		return false
	}
	d := tokenDigest(tok)
	return subtle.ConstantTimeCompare(d[:], s.token[:]) == 1
}

// authenticate checks a token for c, from AUTH or HELLO ... AUTH alike:
// on success the connection leaves its stranger's limits; on failure the
// reply waits for the daemon-wide authGate.
func (c *conn) authenticate(tok []byte) error {
	if c.s.checkToken(tok) {
		c.authed = true
		c.lim.MaxRequest, c.lim.MaxArgs = c.s.o.MaxRequest, 0
		return nil
	}
	if c.s.o.AuthToken != "" {
		c.s.stats.authFailures.Add(1)
		var by time.Time
		if !c.authed {
			by = c.authBy
		}
		if !c.s.auth.wait(by, c.s.stop) {
			// Its turn would come after its grace: say so and close
			// rather than hold the connection past the grace.
			c.quit = true
		}
	}
	return wrongPass(c.s)
}

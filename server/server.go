package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server/internal/resp"
)

// Defaults for the zero fields of Options.
const (
	DefaultMaxClients     = 10000
	DefaultMaxUnixClients = 1024
	DefaultMaxRequest     = resp.DefaultMaxRequest
	DefaultRequestTimeout = 10 * time.Second
	DefaultAuthTimeout    = 5 * time.Second
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultWriteTimeout   = 30 * time.Second
	DefaultDrainTimeout   = 10 * time.Second
	DefaultMaxEvalTimeout = time.Minute
	DefaultMaxEvalMemory  = 1 << 30
	// SocketName is the daemon's socket inside its data directory.
	SocketName = "cube.sock"
)

// Options configure a Server. The zero value of each field means its
// documented default; at least one of Socket and Listen must be set.
type Options struct {
	// Socket is the Unix socket path, created with mode 0600. A stale
	// socket file left by a killed daemon is replaced; a live one is
	// ErrSocketInUse.
	Socket string
	// Listen is a TCP address ("127.0.0.1:7379"). Every TCP connection
	// must AUTH with AuthToken before anything but PING, HELLO, AUTH and
	// QUIT; Unix socket clients are trusted by the socket's file mode.
	Listen string
	// AuthToken is required with Listen.
	AuthToken string
	// MaxClients bounds open TCP connections; one more is told so and
	// closed.
	MaxClients int
	// MaxUnixClients bounds open Unix socket connections. It is a budget
	// of its own, so that however many TCP clients connect, the owner can
	// still reach the daemon on its socket.
	MaxUnixClients int
	// MaxRequest bounds one command's bytes; a larger one is refused and
	// its connection closed (the stream cannot be resynchronised). Before
	// AUTH, a TCP connection may send at most 4 KiB per request.
	MaxRequest int
	// RequestTimeout bounds the time from a request's first byte to its
	// last: a client that trickles a request is closed when it runs out,
	// however steadily it sends.
	RequestTimeout time.Duration
	// AuthTimeout is how long a TCP connection may take to authenticate
	// after it connects; past it, it is closed.
	AuthTimeout time.Duration
	// IdleTimeout closes a TCP connection that sends nothing for this
	// long; negative means never.
	IdleTimeout time.Duration
	// UnixIdleTimeout closes a Unix socket connection that sends nothing
	// for this long; zero (the default) means never.
	UnixIdleTimeout time.Duration
	// WriteTimeout bounds how long a client may take to read a reply.
	WriteTimeout time.Duration
	// DrainTimeout bounds the wait for in-flight commands at shutdown;
	// after it, connections are closed and running programs cancelled.
	DrainTimeout time.Duration
	// AfterDrain, if set, runs once every connection is closed and before
	// the socket file is removed: cube serve checkpoints and closes the
	// store in it, so that a socket that is gone means a store that is
	// free (the CLI's shutdown waits for that before it returns).
	AfterDrain func()
	// MaxEvalTimeout and MaxEvalMemory bound what an EVAL may ask for
	// with TIMEOUT ms and MEMORY mib (an EVAL without them runs under the
	// store's default limits). A larger request is refused, not clipped.
	// Zero means DefaultMaxEvalTimeout (1 minute) and DefaultMaxEvalMemory
	// (1 GiB).
	MaxEvalTimeout time.Duration
	MaxEvalMemory  int64
	// Cluster, if set, is cluster mode: writes are refused on a node
	// that is not the leader (with the redirect it gives) and the
	// CLUSTER.* commands reach it. See package server/cluster.
	Cluster Cluster
	// NoEventLoop serves every Unix socket connection from a goroutine of
	// its own, as TCP connections are served, instead of from the event
	// loop (Linux only; see loop). For comparison and diagnosis.
	NoEventLoop bool
	// Version is reported by HELLO and INFO.
	Version string
	// Logger receives connection errors and lifecycle notices; nil
	// discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxClients <= 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.MaxUnixClients <= 0 {
		o.MaxUnixClients = DefaultMaxUnixClients
	}
	if o.MaxRequest <= 0 {
		o.MaxRequest = DefaultMaxRequest
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = DefaultAuthTimeout
	}
	switch {
	case o.IdleTimeout == 0:
		o.IdleTimeout = DefaultIdleTimeout
	case o.IdleTimeout < 0:
		o.IdleTimeout = 0
	}
	o.UnixIdleTimeout = max(o.UnixIdleTimeout, 0)
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.MaxEvalTimeout <= 0 {
		o.MaxEvalTimeout = DefaultMaxEvalTimeout
	}
	if o.MaxEvalMemory <= 0 {
		o.MaxEvalMemory = DefaultMaxEvalMemory
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Server is a RESP daemon over one open cube. Create it with New, run it
// with Serve.
type Server struct {
	db      *cube.DB
	o       Options
	table   []*Command
	byName  map[string]*Command
	stats   *serverStats
	started time.Time

	lns      []net.Listener
	unixPath string
	loop     *loop // serves Unix socket connections (nil: goroutines do)

	token [sha256.Size]byte // digest of Options.AuthToken
	auth  authGate

	mu       sync.Mutex
	conns    map[*conn]struct{}
	nTCP     int // of conns, those that came over TCP
	nextID   atomic.Int64
	served   bool
	stopOnce sync.Once
	stop     chan struct{} // closed by Shutdown or Serve's ctx
	draining atomic.Bool
}

// New binds the listeners and returns a Server ready to Serve. It does not
// open the store: the caller owns db (and its directory lock, which is what
// refuses a second daemon on the same data directory).
func New(db *cube.DB, o Options) (*Server, error) {
	o = o.withDefaults()
	o.MaxClients, o.MaxUnixClients = fitFDs(o.Logger, openFileLimit(), o.MaxClients, o.MaxUnixClients)
	if o.Socket == "" && o.Listen == "" {
		return nil, ErrNoListener
	}
	if o.Listen != "" && o.AuthToken == "" {
		return nil, ErrNoAuth
	}
	s := &Server{
		db:      db,
		o:       o,
		conns:   map[*conn]struct{}{},
		stop:    make(chan struct{}),
		started: time.Now(),
		token:   tokenDigest([]byte(o.AuthToken)),
	}
	s.table = commandTable()
	s.byName = make(map[string]*Command, len(s.table))
	for _, c := range s.table {
		s.byName[c.Name] = c
	}
	s.stats = newServerStats(s)
	// TCP first: the Unix socket appearing is what scripts and tests
	// take for "the daemon is up", so every listener must exist by then.
	var tcp net.Listener
	if o.Listen != "" {
		ln, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return nil, fmt.Errorf("server: listen on %s: %w", o.Listen, err)
		}
		tcp = ln
	}
	if o.Socket != "" {
		ln, err := listenUnix(o.Socket)
		if err != nil {
			if tcp != nil {
				tcp.Close()
			}
			return nil, err
		}
		s.lns = append(s.lns, ln) // first: Addrs relies on it
		s.unixPath = o.Socket
	}
	if tcp != nil {
		s.lns = append(s.lns, tcp)
	}
	return s, nil
}

// listenUnix binds path with mode 0600. The socket is bound under a
// temporary name, chmod'ed and renamed into place, so that it is never
// reachable with a wider mode.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%w: %s", ErrNotSocket, path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: %s", ErrSocketInUse, path)
		}
		// Nobody answers: a killed daemon's leftover.
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("server: remove stale socket: %w", err)
		}
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("server: chmod socket: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("server: place socket %s: %w", path, err)
	}
	return ln, nil
}

// Addrs returns the addresses the server listens on.
func (s *Server) Addrs() []net.Addr {
	var a []net.Addr
	for _, ln := range s.lns {
		a = append(a, ln.Addr())
	}
	if s.unixPath != "" && len(a) > 0 {
		a[0] = &net.UnixAddr{Name: s.unixPath, Net: "unix"}
	}
	return a
}

// Serve accepts connections until ctx is done or Shutdown is called (or a
// client sends SHUTDOWN). Then it stops accepting, lets every connection
// finish the commands it has already received and send their replies
// (within Options.DrainTimeout), closes the connections, runs
// Options.AfterDrain and removes the socket file. It returns nil after a clean drain. Serve does not close
// the store: the caller checkpoints and closes it afterwards.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	if s.served {
		s.mu.Unlock()
		return ErrClosed
	}
	s.served = true
	s.mu.Unlock()

	// hard is cancelled only when draining gives up: commands in flight
	// at shutdown are allowed to finish.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	if s.unixPath != "" && s.o.Cluster == nil && !s.o.NoEventLoop {
		// Under --cluster a write waits for Raft, not the log: it keeps a
		// goroutine per connection.
		s.loop = newLoop(s, hard)
	}
	var wg sync.WaitGroup
	for _, ln := range s.lns {
		_, tcp := ln.(*net.TCPListener)
		wg.Go(func() { s.acceptLoop(hard, ln, tcp) })
	}
	select {
	case <-ctx.Done():
	case <-s.stop:
	}
	s.Shutdown()
	s.draining.Store(true)
	s.closeListeners()
	wg.Wait()

	// Wake connections blocked reading; they finish what they hold.
	s.mu.Lock()
	for c := range s.conns {
		if c.nc != nil {
			c.nc.SetReadDeadline(time.Now())
		}
	}
	s.mu.Unlock()
	if s.loop != nil {
		s.loop.startDrain()
	}
	deadline := time.NewTimer(s.o.DrainTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var err error
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-tick.C:
			continue
		case <-deadline.C:
			err = fmt.Errorf("server: %d connection(s) still busy after %v; closed them", n, s.o.DrainTimeout)
			cancelHard()
			s.mu.Lock()
			for c := range s.conns {
				if c.nc != nil {
					c.nc.Close()
				}
			}
			s.mu.Unlock()
			if s.loop != nil {
				s.loop.kill()
			}
		}
		break
	}
	if s.loop != nil {
		s.loop.wait()
	}
	if s.o.AfterDrain != nil {
		s.o.AfterDrain()
	}
	if s.unixPath != "" {
		os.Remove(s.unixPath)
	}
	return err
}

// Shutdown asks Serve to drain and return. It does not wait.
func (s *Server) Shutdown() {
	s.stopOnce.Do(func() { close(s.stop) })
}

func (s *Server) closeListeners() {
	for _, ln := range s.lns {
		ln.Close()
	}
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, tcp bool) {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.draining.Load() {
				return
			}
			// EMFILE and friends: back off rather than spin.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.o.Logger.Warn("accept", "err", err, "retry_in", delay)
			select {
			case <-time.After(delay):
			case <-s.stop:
				return
			}
			continue
		}
		delay = 0
		c := newConn(s, nc, tcp)
		s.mu.Lock()
		if n, limit := s.budget(tcp); n >= limit || s.draining.Load() {
			s.mu.Unlock()
			s.stats.rejected.Add(1)
			nc.SetWriteDeadline(time.Now().Add(time.Second))
			if s.draining.Load() {
				nc.Write([]byte("-SHUTDOWN the server is shutting down\r\n"))
			} else if tcp {
				fmt.Fprintf(nc, "-ERR max number of clients reached (%d TCP connections, --max-clients)\r\n", limit)
			} else {
				fmt.Fprintf(nc, "-ERR max number of clients reached (%d Unix socket connections, --max-unix-clients)\r\n", limit)
			}
			nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		if tcp {
			s.nTCP++
		}
		s.mu.Unlock()
		s.stats.accepted.Add(1)
		if !tcp && s.loop != nil && s.loop.add(c, nc) {
			continue
		}
		go func() {
			if !c.serve(ctx, nil) {
				s.forget(c)
			}
		}()
	}
}

// forget removes a closed connection from the server's set.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.tcp {
		s.nTCP--
	}
	s.mu.Unlock()
}

// clients returns the number of open connections.
func (s *Server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// budget returns the open connections of a listener's kind and their
// limit; s.mu is held.
func (s *Server) budget(tcp bool) (n, limit int) {
	if tcp {
		return s.nTCP, s.o.MaxClients
	}
	return len(s.conns) - s.nTCP, s.o.MaxUnixClients
}

package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
)

type testServer struct {
	db   *cube.DB
	srv  *server.Server
	sock string
	dir  string
	done chan error
	stop context.CancelFunc
}

// shortDir returns a directory with a short path: Unix socket paths are
// limited to about 100 bytes, and t.TempDir's can be longer.
func shortDir(tb testing.TB) string {
	d, err := os.MkdirTemp("", "cs")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func startServer(tb testing.TB, o server.Options) *testServer {
	tb.Helper()
	return startServerDB(tb, cube.Options{}, o)
}

// startServerDB is startServer on a store opened with do (its sync mode
// is always SyncNone).
func startServerDB(tb testing.TB, do cube.Options, o server.Options) *testServer {
	tb.Helper()
	do.Engine.Sync = cube.SyncNone
	return startServerSync(tb, do, o)
}

// startServerSync is startServerDB in do's own sync mode.
func startServerSync(tb testing.TB, do cube.Options, o server.Options) *testServer {
	tb.Helper()
	dir := tb.TempDir()
	db, err := cube.Open(dir, do)
	if err != nil {
		tb.Fatal(err)
	}
	if o.Socket == "" {
		o.Socket = filepath.Join(shortDir(tb), "cube.sock")
	}
	srv, err := server.New(db, o)
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{db: db, srv: srv, sock: o.Socket, dir: dir, done: make(chan error, 1), stop: cancel}
	go func() { ts.done <- srv.Serve(ctx) }()
	tb.Cleanup(func() { ts.close(tb) })
	return ts
}

func (ts *testServer) close(tb testing.TB) {
	if ts.stop == nil {
		return
	}
	ts.stop()
	ts.stop = nil
	select {
	case err := <-ts.done:
		if err != nil {
			tb.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		tb.Errorf("Serve did not return")
	}
	if err := ts.db.Close(); err != nil {
		tb.Errorf("close: %v", err)
	}
}

func (ts *testServer) client(tb testing.TB, proto int) *redis.Client {
	cl := redis.NewClient(&redis.Options{Network: "unix", Addr: ts.sock, Protocol: proto, DisableIdentity: true})
	tb.Cleanup(func() { cl.Close() })
	return cl
}

// raw is a plain connection for sending exact bytes.
type raw struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(tb testing.TB, network, addr string) *raw {
	tb.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &raw{c, bufio.NewReader(c)}
}

// reply reads one RESP reply and returns it as text: +s, -err, :n, $bulk,
// $nil, and arrays as [a b c].
func (r *raw) reply(tb testing.TB) string {
	tb.Helper()
	line, err := r.r.ReadString('\n')
	if err != nil {
		tb.Fatalf("read reply: %v", err)
	}
	line = line[:len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', ',', '#':
		return line
	case '$':
		if line == "$-1" {
			return "$nil"
		}
		var n int
		if _, err := fmt.Sscan(line[1:], &n); err != nil {
			tb.Fatal(err)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r.r, b); err != nil {
			tb.Fatal(err)
		}
		return "$" + string(b[:n])
	case '*', '%':
		if line == "*-1" {
			return "*nil"
		}
		var n int
		fmt.Sscan(line[1:], &n)
		if line[0] == '%' {
			n *= 2
		}
		s := "["
		for i := range n {
			if i > 0 {
				s += " "
			}
			s += r.reply(tb)
		}
		return s + "]"
	}
	tb.Fatalf("unexpected reply line %q", line)
	return ""
}

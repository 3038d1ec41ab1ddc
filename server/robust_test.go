package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
)

// TestMalformed sends bad bytes on many connections while a well-behaved
// client keeps writing: each bad one gets an error and is closed, the good
// one never notices, and the daemon keeps serving.
func TestMalformed(t *testing.T) {
	ts := startServer(t, server.Options{MaxRequest: 1 << 16})
	ctx := context.Background()
	good := ts.client(t, 2)
	if err := good.Do(ctx, "NS.CREATE", "g", "DIMS", 1).Err(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var goodErr error
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := good.Do(ctx, "PUT", "g", i, "v").Err(); err != nil {
				goodErr = err
				return
			}
		}
	})
	bad := []struct{ in, want string }{
		{"*1\r\n$9223372036854775807\r\nab\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$-5\r\nabcdefgh\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*-3\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*2\r\n+PUT\r\n", "-ERR Protocol error: expected '$'"},
		{"*1\r\n$99999999\r\n", "-ERR request too large"},
		{"*100000000\r\n", "-ERR request too large"},
		{"*1\r\n$3\r\nabcde\r\n", "-ERR Protocol error: bulk string not followed by CRLF"},
		{"GET \"unterminated\r\n", "-ERR Protocol error: unbalanced quotes"},
		{strings.Repeat("x", 70000), "-ERR request too large"},
		{"PING\r\n*1\r\n$-1\r\n", "+PONG"},
	}
	for _, b := range bad {
		r := dialRaw(t, "unix", ts.sock)
		r.Write([]byte(b.in))
		if got := r.reply(t); !strings.HasPrefix(got, b.want) {
			t.Errorf("%.30q: reply %q, want %q", b.in, got, b.want)
		}
	}
	close(stop)
	wg.Wait()
	if goodErr != nil {
		t.Fatalf("the well-behaved client failed: %v", goodErr)
	}
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestTimeouts: a client that starts a request and stalls is closed after
// RequestTimeout, an idle one after UnixIdleTimeout; others are unaffected.
func TestTimeouts(t *testing.T) {
	ts := startServer(t, server.Options{RequestTimeout: 100 * time.Millisecond, UnixIdleTimeout: 300 * time.Millisecond})
	slow := dialRaw(t, "unix", ts.sock)
	slow.Write([]byte("*2\r\n$4\r\nPING"))
	if got := slow.reply(t); !strings.Contains(got, "request not completed within 100ms") {
		t.Fatalf("slow client: %q", got)
	}
	idle := dialRaw(t, "unix", ts.sock)
	start := time.Now()
	if got := idle.reply(t); !strings.Contains(got, "idle for 300ms") {
		t.Fatalf("idle client: %q", got)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("idle client closed after %v", d)
	}
	if err := ts.client(t, 2).Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestMaxClients: one Unix socket connection over its limit is told so
// and closed.
func TestMaxClients(t *testing.T) {
	ts := startServer(t, server.Options{MaxUnixClients: 2})
	a := dialRaw(t, "unix", ts.sock)
	b := dialRaw(t, "unix", ts.sock)
	for _, r := range []*raw{a, b} {
		r.Write([]byte("PING\r\n"))
		if got := r.reply(t); got != "+PONG" {
			t.Fatal(got)
		}
	}
	c := dialRaw(t, "unix", ts.sock)
	if got := c.reply(t); !strings.Contains(got, "max number of clients reached") {
		t.Fatalf("third client: %q", got)
	}
	a.Close()
	// The slot frees once the server notices the close.
	deadline := time.Now().Add(5 * time.Second)
	for {
		d := dialRaw(t, "unix", ts.sock)
		d.Write([]byte("PING\r\n"))
		if got := d.reply(t); got == "+PONG" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a freed slot was never reused")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTCPAuth: TCP needs a token; before AUTH only PING, HELLO, AUTH and
// QUIT are allowed.
func TestTCPAuth(t *testing.T) {
	dir := shortDir(t)
	db, err := cube.Open(t.TempDir(), cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := server.New(db, server.Options{Listen: "127.0.0.1:0"}); !errors.Is(err, server.ErrNoAuth) {
		t.Fatalf("TCP without a token: %v, want ErrNoAuth", err)
	}
	srv, err := server.New(db, server.Options{Socket: filepath.Join(dir, "s"), Listen: "127.0.0.1:0", AuthToken: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	addr := srv.Addrs()[1].String()

	r := dialRaw(t, "tcp", addr)
	for _, step := range []struct{ send, want string }{
		{"PING\r\n", "+PONG"},
		{"NS.LIST\r\n", "-NOAUTH Authentication required"},
		{"PUT w 1 v\r\n", "-NOAUTH"},
		{"HELLO 3\r\n", "-NOAUTH"},
		{"AUTH wrong\r\n", "-WRONGPASS"},
		{"AUTH s3cret\r\n", "+OK"},
		{"NS.LIST\r\n", "[]"},
	} {
		r.Write([]byte(step.send))
		if got := r.reply(t); !strings.HasPrefix(got, step.want) {
			t.Fatalf("%q: got %q, want %q", step.send, got, step.want)
		}
	}
	// go-redis with a password uses HELLO 3 AUTH.
	cl := redis.NewClient(&redis.Options{Addr: addr, Password: "s3cret", DisableIdentity: true})
	defer cl.Close()
	if err := cl.Do(ctx, "NS.LIST").Err(); err != nil {
		t.Fatalf("go-redis with the token: %v", err)
	}
	bad := redis.NewClient(&redis.Options{Addr: addr, Password: "nope", DisableIdentity: true, MaxRetries: -1})
	defer bad.Close()
	if err := bad.Do(ctx, "NS.LIST").Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("go-redis with a wrong token: %v", err)
	}
	// The Unix socket needs no AUTH.
	u := dialRaw(t, "unix", filepath.Join(dir, "s"))
	u.Write([]byte("NS.LIST\r\n"))
	if got := u.reply(t); got != "[]" {
		t.Fatalf("unix socket: %q", got)
	}
}

// TestSocketFile: mode 0600; a stale socket is replaced; a live one or a
// regular file is refused; Serve removes the socket at the end.
func TestSocketFile(t *testing.T) {
	dir := shortDir(t)
	sock := filepath.Join(dir, "cube.sock")
	// A stale socket: bound, then its listener gone without unlinking.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatal("the stale socket should exist:", err)
	}
	ts := startServer(t, server.Options{Socket: sock})
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	db2, err := cube.Open(t.TempDir(), cube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := server.New(db2, server.Options{Socket: sock}); !errors.Is(err, server.ErrSocketInUse) {
		t.Fatalf("second server on a live socket: %v", err)
	}
	plain := filepath.Join(dir, "file")
	os.WriteFile(plain, []byte("keep me"), 0o644)
	if _, err := server.New(db2, server.Options{Socket: plain}); !errors.Is(err, server.ErrNotSocket) {
		t.Fatalf("socket path on a regular file: %v", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "keep me" {
		t.Fatal("the regular file was touched")
	}
	ts.close(t)
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// TestShutdownDrains: commands received before SHUTDOWN get their replies;
// the listener is closed after it.
func TestShutdownDrains(t *testing.T) {
	ts := startServer(t, server.Options{})
	ctx := context.Background()
	cl := ts.client(t, 2)
	cl.Do(ctx, "NS.CREATE", "d", "DIMS", 1)
	r := dialRaw(t, "unix", ts.sock)
	var b strings.Builder
	for i := range 500 {
		b.WriteString("PUT d " + itoa(i) + " v\r\n")
	}
	b.WriteString("SHUTDOWN\r\n")
	r.Write([]byte(b.String()))
	for i := range 500 {
		if got := r.reply(t); got != "+OK" {
			t.Fatalf("PUT %d: %q", i, got)
		}
	}
	if got := r.reply(t); got != "+OK" {
		t.Fatalf("SHUTDOWN: %q", got)
	}
	if _, err := r.r.ReadByte(); err != io.EOF {
		t.Fatalf("after SHUTDOWN: %v, want EOF", err)
	}
	select {
	case err := <-ts.done:
		if err != nil {
			t.Fatal(err)
		}
		ts.stop()
		ts.stop = nil
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after SHUTDOWN")
	}
	ns, err := ts.db.Namespace("d")
	if err != nil {
		t.Fatal(err)
	}
	if n := ns.Info().Values; n != 500 {
		t.Fatalf("%d values after drain, want 500", n)
	}
	ts.db.Close()
}

func itoa(i int) string { return strconv.Itoa(i) }

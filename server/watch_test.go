package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
)

// syncBuf is a log destination safe for the server's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// longRuns starts a server whose scripts may run for a minute, so that
// only a cancellation can end an endless one early. It listens on TCP
// too, with the token "t"; dial returns an authenticated connection.
func longRuns(t *testing.T) (ts *testServer, log *syncBuf, dial func(network string) *raw) {
	log = &syncBuf{}
	ts = startServerDB(t, cube.Options{Limits: cube.Limits{Timeout: time.Minute}},
		server.Options{Listen: "127.0.0.1:0", AuthToken: "t", Logger: slog.New(slog.NewTextHandler(log, nil))})
	dial = func(network string) *raw {
		if network == "unix" {
			return dialRaw(t, "unix", ts.sock)
		}
		r := dialRaw(t, "tcp", ts.srv.Addrs()[1].String())
		r.Write([]byte("AUTH t\r\n"))
		if got := r.reply(t); got != "+OK" {
			t.Fatalf("AUTH: %s", got)
		}
		return r
	}
	r := dial("unix")
	r.Write([]byte("NS.CREATE w DIMS 1\r\n"))
	if got := r.reply(t); got != "+OK" {
		t.Fatal(got)
	}
	return ts, log, dial
}

func stats(t *testing.T, ts *testServer) server.Stats {
	t.Helper()
	r := dialRaw(t, "unix", ts.sock)
	r.Write([]byte("STATS\r\n"))
	got := r.reply(t)
	var st server.Stats
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got, "$")), &st); err != nil {
		t.Fatalf("STATS %q: %v", got, err)
	}
	return st
}

// TestCloseCancelsEval is the REPL's Ctrl-C: a client that closes its
// connection while an endless EVAL runs frees the namespace at once.
func TestCloseCancelsEval(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			ts, log, dial := longRuns(t)
			a := dial(network)
			a.Write([]byte("EVAL w \"cube.put([1], 'half'); while(true){}\"\r\n"))
			time.Sleep(100 * time.Millisecond) // let it start
			a.Close()

			b := dial(network)
			start := time.Now()
			b.Write([]byte("EVAL w \"cube.get([1]) === null ? 'free' : 'dirty'\"\r\n"))
			if got := b.reply(t); got != "$free" {
				t.Fatalf("EVAL after the close = %q, want $free (the aborted run's write rolled back)", got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the next EVAL waited %v for the abandoned one", d)
			}
			// The aborted EVAL is counted and logged as its goroutine
			// unwinds, which may be just after the namespace was freed
			// (and the count comes just before the log line).
			cancelledLogged := func() bool {
				l := log.String()
				return strings.Contains(l, "cancelled") && strings.Contains(l, "cmd=EVAL")
			}
			st := stats(t, ts)
			for i := 0; i < 100 && (st.Server.Cancelled == 0 || !cancelledLogged()); i++ {
				time.Sleep(10 * time.Millisecond)
				st = stats(t, ts)
			}
			if st.Server.Cancelled != 1 {
				t.Fatalf("commands_cancelled = %d, want 1", st.Server.Cancelled)
			}
			if ev := st.Commands["eval"]; ev.Errors != 1 {
				t.Fatalf("eval stats = %+v, want 1 error (the aborted run)", ev)
			}
			if !cancelledLogged() {
				t.Fatalf("log = %q, want the cancelled EVAL", log.String())
			}
		})
	}
}

// TestPipelineDuringEval sends a pipeline while an EVAL runs, small and
// then larger than what the watcher reads ahead: no request is lost or
// reordered.
func TestPipelineDuringEval(t *testing.T) {
	_, _, dial := longRuns(t)
	for _, n := range []int{50, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := dial("unix")
			r.Write([]byte("EVAL w \"let t = Date.now(); while (Date.now() - t < 150) {}; 7\"\r\n"))
			time.Sleep(30 * time.Millisecond)
			val := strings.Repeat("v", 100)
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "PUT w %d %s%d\r\nGET w %d\r\n", i, val, i, i)
			}
			b.WriteString("PING last\r\n")
			werr := make(chan error, 1)
			go func() { _, err := r.Write([]byte(b.String())); werr <- err }()
			if got := r.reply(t); got != "$7" {
				t.Fatalf("the running EVAL = %q", got)
			}
			for i := range n {
				if got := r.reply(t); got != "+OK" {
					t.Fatalf("PUT %d = %q", i, got)
				}
				if got, want := r.reply(t), fmt.Sprintf("$%s%d", val, i); got != want {
					t.Fatalf("GET %d = %.20q..., want %.20q...", i, got, want)
				}
			}
			if got := r.reply(t); got != "$last" {
				t.Fatalf("last reply = %q", got)
			}
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHalfClose: a unix-socket client that shuts down its writing side
// after its request (nc -N) is still reading, and gets its reply.
func TestHalfClose(t *testing.T) {
	ts, _, dial := longRuns(t)
	r := dial("unix")
	r.Write([]byte("EVAL w \"let t = Date.now(); while (Date.now() - t < 150) {}; 'done'\"\r\n"))
	time.Sleep(30 * time.Millisecond)
	if err := r.Conn.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got := r.reply(t); got != "$done" {
		t.Fatalf("reply after a half-close = %q", got)
	}
	if st := stats(t, ts); st.Server.Cancelled != 0 {
		t.Fatalf("commands_cancelled = %d, want 0", st.Server.Cancelled)
	}
}

// BenchmarkEvalRoundTrip measures one short EVAL per round trip, the
// kind of command a watcher guards (GET and PUT, marked Fast, are not).
func BenchmarkEvalRoundTrip(b *testing.B) {
	roundTrips(b, benchConn(b), []byte("EVAL w 1\r\n"), "$1")
}

// TestWatchAtTheThreshold runs commands that end about when the watch
// starts (the race between a command's end and its watcher), each
// followed by a pipelined unwatched command: every reply arrives, in
// order (run it with -race).
func TestWatchAtTheThreshold(t *testing.T) {
	_, _, dial := longRuns(t)
	r := dial("unix")
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := range n {
		// 0 to 3 ms of work around the 2 ms threshold.
		fmt.Fprintf(r, "EVAL w \"{ let t = Date.now(); while (Date.now() - t < %d) {} } %d\"\r\nPING p%d\r\n", i%4, i, i)
		if got, want := r.reply(t), fmt.Sprintf("$%d", i); got != want {
			t.Fatalf("EVAL %d = %q", i, got)
		}
		if got, want := r.reply(t), fmt.Sprintf("$p%d", i); got != want {
			t.Fatalf("PING %d = %q", i, got)
		}
	}
}

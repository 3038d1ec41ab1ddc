package server_test

import (
	"strings"
	"testing"

	"github.com/cubelinux/cube/server"
)

// TestConnSeesNamespaceRecreated: a connection keeps the namespace it
// named last (call.ns), but a namespace dropped and created again under
// the same name, by another client or by itself, is the new one on its
// next command, in both connection models. Break seen failing: the
// cached handle used without its Dropped check (the PUT to the 2-D
// namespace is refused as a 1-D one, and the GET reads the dropped
// value).
func TestConnSeesNamespaceRecreated(t *testing.T) {
	for _, m := range connModels {
		t.Run(m.name, func(t *testing.T) {
			ts := startServer(t, server.Options{NoEventLoop: m.noLoop})
			a := dialRaw(t, "unix", ts.sock)
			b := dialRaw(t, "unix", ts.sock)
			say := func(r *raw, want string, args ...string) {
				t.Helper()
				var sb strings.Builder
				sb.WriteString(strings.Join(args, " ") + "\r\n")
				if _, err := r.Write([]byte(sb.String())); err != nil {
					t.Fatal(err)
				}
				if got := r.reply(t); got != want {
					t.Fatalf("%s: got %q, want %q", strings.Join(args, " "), got, want)
				}
			}
			say(a, "+OK", "NS.CREATE", "n", "DIMS", "1")
			say(a, "+OK", "PUT", "n", "7", "old")
			say(a, "$old", "GET", "n", "7")
			// Another connection replaces it.
			say(b, "+OK", "NS.DROP", "n")
			say(b, "+OK", "NS.CREATE", "n", "DIMS", "2")
			say(a, "$nil", "GET", "n", "7", "0")
			say(a, "+OK", "PUT", "n", "7", "0", "new")
			say(a, "$new", "GET", "n", "7", "0")
			// And the connection itself, pipelined behind its own writes.
			if _, err := a.Write([]byte("PUT n 1 1 x\r\nNS.DROP n\r\nNS.CREATE n DIMS 1\r\nPUT n 1 y\r\nGET n 1\r\n")); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"+OK", "+OK", "+OK", "+OK", "$y"} {
				if got := a.reply(t); got != want {
					t.Fatalf("pipeline: got %q, want %q", got, want)
				}
			}
		})
	}
}

package server_test

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cubelinux/cube/server"
)

// TestAfterDrainBeforeSocketRemoved: Options.AfterDrain runs after every
// connection is closed and while the socket file still exists, so that a
// client waiting for the socket to go (cube shutdown) knows the caller's
// AfterDrain (cube serve's checkpoint and close) is over. Break it caught:
// the call moved after os.Remove(s.unixPath) (the socket was already gone
// inside AfterDrain).
func TestAfterDrainBeforeSocketRemoved(t *testing.T) {
	type seen struct {
		socketThere bool
	}
	ran := make(chan seen, 1)
	// The socket's path reaches AfterDrain through an atomic: the race
	// detector sees no order in bytes passed over a socket the event
	// loop reads with raw system calls.
	var path atomic.Pointer[string]
	ts := startServer(t, server.Options{AfterDrain: func() {
		_, err := os.Stat(*path.Load())
		ran <- seen{socketThere: err == nil}
	}})
	sock := ts.sock
	path.Store(&sock)
	r := dialRaw(t, "unix", ts.sock)
	r.Write([]byte("SHUTDOWN\r\n"))
	if got := r.reply(t); got != "+OK" {
		t.Fatalf("SHUTDOWN: %q", got)
	}
	select {
	case s := <-ran:
		if !s.socketThere {
			t.Fatal("AfterDrain ran after the socket was removed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AfterDrain did not run after SHUTDOWN")
	}
	select {
	case err := <-ts.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	ts.stop()
	ts.stop = nil
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	ts.db.Close()
}

package server_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/cubelinux/cube/server"
)

// The data commands' hot paths, measured through a real socket: one
// command per round trip, and a pipeline of 100 in one write (consecutive
// PUTs to one namespace then run as one transaction). Compare runs with
// benchstat.

func benchConn(b *testing.B) *raw {
	ts := startServer(b, server.Options{})
	r := dialRaw(b, "unix", ts.sock)
	r.SetDeadline(time.Time{})
	r.Write([]byte("NS.CREATE w DIMS 2\r\n"))
	if got := r.reply(b); got != "+OK" {
		b.Fatal(got)
	}
	r.Write([]byte("PUT w 1 2 hello\r\n"))
	if got := r.reply(b); got != "+OK" {
		b.Fatal(got)
	}
	return r
}

// roundTrips sends req and reads its one reply, want, b.N times.
func roundTrips(b *testing.B, r *raw, req []byte, want string) {
	b.ReportAllocs()
	for b.Loop() {
		r.Write(req)
		if got := r.reply(b); got != want {
			b.Fatal(got)
		}
	}
}

func BenchmarkPutRoundTrip(b *testing.B) {
	roundTrips(b, benchConn(b), []byte("PUT w 1 2 hello\r\n"), "+OK")
}
func BenchmarkGetRoundTrip(b *testing.B) {
	roundTrips(b, benchConn(b), []byte("GET w 1 2\r\n"), "$hello")
}

// pipeline sends n copies of cmd (with its index as the first
// coordinate) in one write and reads the n replies.
func pipeline(b *testing.B, cmd string, n int, want string) {
	r := benchConn(b)
	var req bytes.Buffer
	for i := range n {
		fmt.Fprintf(&req, cmd, i)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Write(req.Bytes())
		for range n {
			if got := r.reply(b); got != want {
				b.Fatal(got)
			}
		}
	}
}

func BenchmarkPutPipelined100(b *testing.B) { pipeline(b, "PUT w %d 2 hello\r\n", 100, "+OK") }
func BenchmarkGetPipelined100(b *testing.B) { pipeline(b, "GET w %d 3\r\n", 100, "$nil") }

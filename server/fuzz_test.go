package server_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/cubelinux/cube/server/internal/resp"
)

// FuzzCommands sends arbitrary arguments to every command of a running
// daemon: each must get exactly one reply (an error is fine), and the
// daemon must keep answering. The first byte picks the command, the rest
// is split on NUL into its arguments.
func FuzzCommands(f *testing.F) {
	cmds := server.Commands()
	var names []string
	for _, c := range cmds {
		if c.Name != "SHUTDOWN" && c.Name != "QUIT" {
			names = append(names, c.Name)
		}
	}
	for i, seed := range []string{
		"w\x001\x002\x00v", "w\x001\x002", "w\x000\x000\x009\x009\x00LIMIT\x002", "w\x001\x002\x003\x004\x00road\x00WEIGHT\x00inf",
		"w\x00DIMS\x002", "w\x001\x002\x00DEPTH\x00-1", "", "w\x00\xff\xfe", "w\x00p\x00JS\x00function run(){}",
	} {
		f.Add(byte(i*5), []byte(seed))
	}
	ts := startServer(f, server.Options{})
	ctl := ts.client(f, 2)
	ctl.Do(context.Background(), "NS.CREATE", "w", "DIMS", 2)
	var conn net.Conn
	f.Fuzz(func(t *testing.T, pick byte, in []byte) {
		if conn == nil {
			c, err := net.Dial("unix", ts.sock)
			if err != nil {
				t.Fatalf("daemon gone: %v", err)
			}
			conn = c
		}
		args := [][]byte{[]byte(names[int(pick)%len(names)])}
		if len(in) > 0 {
			args = append(args, bytes.Split(in, []byte{0})...)
		}
		var w resp.Writer
		w.Array(len(args))
		for _, a := range args {
			w.Bulk(a)
		}
		w.B = append(w.B, "*1\r\n$4\r\nPING\r\n"...)
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(w.B); err != nil {
			t.Fatalf("write: %v", err)
		}
		// The reply to the command, then PONG: the connection is in step.
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 4096)
		for !bytes.HasSuffix(buf, []byte("+PONG\r\n")) {
			n, err := conn.Read(tmp)
			if err != nil {
				t.Fatalf("%q: read: %v (got %q)", args, err, buf)
			}
			buf = append(buf, tmp[:n]...)
		}
		if strings.HasPrefix(string(args[0]), "HELLO") {
			conn.Close()
			conn = nil
		}
	})
	if conn != nil {
		conn.Close()
	}
}

// FuzzRawStream: any bytes a client sends on the Unix socket, then half
// closing, get replies and an end of stream (never a hang), and the
// daemon goes on serving others. The bytes reach the event loop's parser
// and scheduling (partial requests, pipelines, inline commands, slow
// commands that hand the connection to a goroutine).
func FuzzRawStream(f *testing.F) {
	for _, seed := range []string{
		"PING\r\n", "*3\r\n$3\r\nGET\r\n$1\r\nn\r\n$1\r\n1\r\n", "*1\r\n$-1\r\n",
		"*4\r\n$3\r\nPUT\r\n$1\r\nn\r\n$1\r\n1\r\n$1000000000\r\n", "PUT n 1 x\r\nGET n 1\r\nREGION n 0 9\r\nGET n 1\r\n",
		"\r\n\r\n", "QUIT\r\nPING\r\n", "*2\r\n$4\r\nPING\r\n", "PUT n 1", "*100000\r\n",
	} {
		f.Add([]byte(seed))
	}
	ts := startServer(f, server.Options{})
	if _, err := ts.db.CreateNamespace(context.Background(), "n", cube.NamespaceOptions{Dims: 1}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := net.Dial("unix", ts.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			c.Write(b)
			c.(*net.UnixConn).CloseWrite()
		}()
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("no end of stream after the client half-closed: %v", err)
		}
		p := dialRaw(t, "unix", ts.sock)
		p.Write([]byte("PING\r\n"))
		if got := p.reply(t); got != "+PONG" {
			t.Fatalf("PING after the stream: %s", got)
		}
		p.Close()
	})
}

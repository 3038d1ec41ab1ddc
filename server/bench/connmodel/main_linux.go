// Command connmodel answers every RESP command with the same 3-byte bulk
// string, either from a goroutine per connection (Go's net package, as
// cube's daemon does) or from one epoll loop on one locked thread (as
// redis-server, gnet and evio do), so that what the connection model alone
// costs per request can be measured on a machine with redis-benchmark,
// apart from everything cube does. connmodel.sh runs both against
// redis-server and prints requests/s and the server's CPU per request.
//
//	connmodel -mode go|epoll -sock /tmp/x.sock
//
// It parses just enough RESP (arrays of bulk strings) for redis-benchmark;
// it is a measuring tool, not a server.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

func main() {
	mode := flag.String("mode", "go", "go (a goroutine per connection) or epoll (one loop)")
	sock := flag.String("sock", "", "unix socket to listen on")
	flag.Parse()
	if *sock == "" {
		fmt.Fprintln(os.Stderr, "connmodel: -sock is required")
		os.Exit(2)
	}
	os.Remove(*sock)
	var err error
	switch *mode {
	case "go":
		err = serveGo(*sock)
	case "epoll":
		err = serveEpoll(*sock)
	default:
		err = fmt.Errorf("-mode must be go or epoll, got %q", *mode)
	}
	fmt.Fprintln(os.Stderr, "connmodel:", err)
	os.Exit(1)
}

var reply = []byte("$3\r\nxyz\r\n")

// commands counts the complete commands at the front of b and returns the
// bytes they take.
func commands(b []byte) (n, used int) {
	i := 0
	for i < len(b) && b[i] == '*' {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 2 {
			return n, i
		}
		k := i + j + 1
		for range atoi(b[i+1 : i+j-1]) {
			e := bytes.IndexByte(b[min(k, len(b)):], '\n')
			if e < 2 {
				return n, i
			}
			k += e + 1 + atoi(b[k+1:k+e-1]) + 2
			if k > len(b) {
				return n, i
			}
		}
		i = k
		n++
	}
	return n, i
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

// serveGo: one goroutine per connection; it reads what has arrived, runs
// every complete command and replies with one write (cube's conn.serve
// does the same).
func serveGo(sock string) error {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 16<<10)
			var out []byte
			have := 0
			for {
				m, err := c.Read(buf[have:])
				if err != nil {
					return
				}
				n, used := commands(buf[:have+m])
				have = copy(buf, buf[used:have+m])
				out = out[:0]
				for range n {
					out = append(out, reply...)
				}
				if len(out) > 0 {
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}
		}()
	}
}

// serveEpoll: one thread waits for every connection with epoll, reads each
// ready one, runs its complete commands and replies with one write.
func serveEpoll(sock string) error {
	runtime.LockOSThread()
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(lfd, &unix.SockaddrUnix{Name: sock}); err != nil {
		return err
	}
	if err := unix.Listen(lfd, 1024); err != nil {
		return err
	}
	ep, err := unix.EpollCreate1(0)
	if err != nil {
		return err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return err
	}
	type state struct {
		buf  []byte
		have int
	}
	conns := map[int32]*state{}
	evs := make([]unix.EpollEvent, 256)
	var out []byte
	for {
		n, err := unix.EpollWait(ep, evs, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range evs[:n] {
			if e.Fd == int32(lfd) {
				for {
					fd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK)
					if err != nil {
						break
					}
					conns[int32(fd)] = &state{buf: make([]byte, 16<<10)}
					unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
				}
				continue
			}
			s := conns[e.Fd]
			m, err := unix.Read(int(e.Fd), s.buf[s.have:])
			if m <= 0 {
				if err == unix.EAGAIN {
					continue
				}
				unix.Close(int(e.Fd))
				delete(conns, e.Fd)
				continue
			}
			k, used := commands(s.buf[:s.have+m])
			s.have = copy(s.buf, s.buf[used:s.have+m])
			out = out[:0]
			for range k {
				out = append(out, reply...)
			}
			if len(out) > 0 {
				unix.Write(int(e.Fd), out) // a short write only skews the measurement
			}
		}
	}
}

package jsproc

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// rawPipe reads and writes a non-blocking pipe with raw system calls,
// waiting on the runtime's poller when it is empty (or full).
//
// Why: a system call made the usual way (syscall.Syscall, as os.File's
// reads and writes do) wakes the runtime's monitor thread, sysmon, when it
// sleeps because every processor is idle; awake, sysmon polls every
// 20 µs until they are idle again. A worker is idle between the messages
// of each run, so every message woke it: under cube stress sysmon's
// sleeps were most of a worker's context switches and a fifth of its CPU.
// A read or write of a non-blocking pipe never blocks, so it needs none
// of the runtime's bookkeeping (syscall.RawSyscall skips it), and when
// there is nothing to read the goroutine parks on the poller, which wakes
// nobody.
type rawPipe struct {
	f  *os.File // keeps the descriptor open
	rc syscall.RawConn
}

func (p *rawPipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := p.rc.Read(func(fd uintptr) bool {
		n, errno = rawCall(syscall.SYS_READ, fd, b)
		return errno != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (p *rawPipe) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		var n int
		var errno syscall.Errno
		err := p.rc.Write(func(fd uintptr) bool {
			n, errno = rawCall(syscall.SYS_WRITE, fd, b[done:])
			return errno != syscall.EAGAIN
		})
		if err != nil {
			return done, err
		}
		if errno != 0 {
			return done, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
		}
		done += n
	}
	return done, nil
}

// rawCall is read(2) or write(2) (trap) of b, a non-empty slice, on fd,
// retried when a signal interrupts it.
func rawCall(trap, fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}

// workerPipe makes the worker's end of a pipe (its standard input or
// output, handed over in blocking mode) non-blocking and returns a
// rawPipe over it. Anything else, or a file it cannot change, is
// returned as it is.
func workerPipe[T any](x T) T {
	f, ok := any(x).(*os.File)
	if !ok {
		return x
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return x
	}
	fd := -1
	if rc.Control(func(d uintptr) { fd = int(d) }) != nil || fd < 0 || syscall.SetNonblock(fd, true) != nil {
		return x
	}
	// A second File over the descriptor, made after the mode changed, so
	// that the runtime registers it with its poller; the first (os.Stdin
	// or os.Stdout) stays open, unused.
	nf := os.NewFile(uintptr(fd), f.Name())
	nrc, err := nf.SyscallConn()
	if err != nil {
		return x
	}
	p := &rawPipe{f: nf, rc: nrc}
	if v, ok := any(p).(T); ok {
		return v
	}
	return x
}

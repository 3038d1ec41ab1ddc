package jsproc

import (
	"bytes"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hardMemory reports whether the worker's memory limit is enforced by the
// kernel on this system.
const hardMemory = true

// limitData sets the worker's RLIMIT_DATA: anonymous writable memory past
// it is refused, and the Go runtime then ends the process.
func limitData(n int64) {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_DATA, &l) != nil {
		return
	}
	l.Cur = min(uint64(n), l.Max)
	_ = unix.Setrlimit(unix.RLIMIT_DATA, &l)
}

// dataMeter measures the growth of the data segment since it was made,
// cheaply enough to do after every request: one pread of
// /proc/self/statm, kept open, where reading /proc/self/status (the
// kernel formats ~50 fields) took an open, four reads, a close and the
// runtime's probing of the new file, a fifth of a short run's cost in the
// worker. statm's data field is the same data_vm that RLIMIT_DATA bounds,
// plus the main thread's stack, which a Go program does not grow; only
// differences are taken from it.
type dataMeter struct {
	fd   int // -1 without one
	base int64
	buf  [128]byte
}

func newDataMeter() *dataMeter {
	// A bare descriptor, read with one raw pread: os.File.ReadAt reads
	// again to fill its buffer, and a non-raw call would wake the
	// runtime's monitor (see rawPipe).
	fd, err := unix.Open("/proc/self/statm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &dataMeter{fd: -1}
	}
	m := &dataMeter{fd: fd}
	m.base = m.read()
	return m
}

// grown is how far the data segment grew since the meter was made.
func (m *dataMeter) grown() int64 {
	if m.fd < 0 {
		return 0
	}
	return m.read() - m.base
}

// read returns statm's data field, in bytes.
func (m *dataMeter) read() int64 {
	r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(m.fd), uintptr(unsafe.Pointer(&m.buf[0])), uintptr(len(m.buf)), 0, 0, 0)
	n := int(r)
	if n <= 0 || e != 0 {
		return m.base
	}
	// size resident shared text lib data dt, in pages.
	f := bytes.Fields(m.buf[:n])
	if len(f) < 6 {
		return m.base
	}
	pages, err := strconv.ParseInt(string(f[5]), 10, 64)
	if err != nil {
		return m.base
	}
	return pages * int64(os.Getpagesize())
}

// dataSize reads the process's data segment (VmData), the figure
// RLIMIT_DATA bounds.
func dataSize() int64 {
	return procStatus("VmData:")
}

// procStatus reads a kB field of /proc/self/status, in bytes.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte(field))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len(field):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n << 10
}

// workerNice is the scheduling priority of a worker: below the daemon's,
// so that on a busy machine the daemon's own timers (the kill at a run's
// time limit) and its clients come before guest code.
const workerNice = 10

// lowerPriority renices every thread of the process. On Linux a priority
// belongs to a thread, and a new thread inherits its creator's, so the
// Go runtime's later threads are lowered too.
func lowerPriority() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, workerNice)
		}
	}
}

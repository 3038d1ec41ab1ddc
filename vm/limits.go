package vm

import "time"

// Defaults for the zero fields of Limits.
const (
	DefaultTimeout     = 1 * time.Second
	DefaultMemoryBytes = 64 << 20 // 64 MiB of guest memory (WASM) or heap estimate (JS)
	DefaultOutputBytes = 1 << 20  // 1 MiB
	DefaultWrites      = 100_000  // puts, deletes, links and unlinks per run
	DefaultHostCalls   = 10_000_000
	DefaultLogBytes    = 64 << 10 // log output kept per run
)

// Limits bound one run of a program. The zero value of each field means
// its Default; a negative value means no limit (for trusted programs only).
type Limits struct {
	Timeout     time.Duration // wall time of one run
	MemoryBytes int64         // guest linear memory (WASM); string/array sizes (JS)
	OutputBytes int64         // bytes of result
	Writes      int64         // writes per run
	HostCalls   int64         // calls into the host per run
	ReadOnly    bool          // writes fail with ErrReadOnly
	Isolation   Isolation     // how runs of one program are kept apart (WASM)
}

// Isolation says whether each run of a program starts from a fresh
// instance. The zero value is Fresh.
type Isolation uint8

const (
	// Fresh runs every call in a new instance of the program, so nothing
	// leaks between runs. The default.
	Fresh Isolation = iota
	// Reuse keeps an instance per concurrent run and calls it again:
	// global variables and memory the program wrote in one run are still
	// there in the next run of the same program (never of another program,
	// never across namespaces). It exists for guests whose instantiation is
	// expensive (Go wasip1: ~3 ms, ~5 MiB); an instance that fails a run is
	// discarded.
	Reuse
)

// String returns "fresh" or "reuse".
func (i Isolation) String() string {
	if i == Reuse {
		return "reuse"
	}
	return "fresh"
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = DefaultOutputBytes
	}
	if l.Writes == 0 {
		l.Writes = DefaultWrites
	}
	if l.HostCalls == 0 {
		l.HostCalls = DefaultHostCalls
	}
	return l
}

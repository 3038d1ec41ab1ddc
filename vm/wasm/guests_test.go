package wasm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestCGuests runs programs built by clang and wasi-libc: the C example of
// docs/ABI.md must agree with aggregate.wat, and a printing program must
// pass the import check and log its output.
func TestCGuests(t *testing.T) {
	s := newSandbox(t)
	h, args := aggregateHost()
	// Not a test of the clock: a loaded machine under -race needs more
	// than the default second for 65,536 points.
	slow := vm.Limits{Timeout: 20 * time.Second}
	wat, err := compile(t, s, "aggregate", slow).Run(ctx, h, args)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile(t, s, "c_sum", slow).Run(ctx, h, args)
	if err != nil {
		t.Fatal(err)
	}
	if string(wat.Output) != string(c.Output) {
		t.Fatalf("C %x, WAT %x", c.Output, wat.Output)
	}
	res, err := compile(t, s, "c_print", vm.Limits{}).Run(ctx, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Logs, "|"); got != "hello from C, time ok|to stderr" {
		t.Fatalf("logs %q", got)
	}
}

// TestGoGuest builds a GOOS=wasip1 program with the Go toolchain running
// the test and runs it fresh and reused.
func TestGoGuest(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds and compiles a 2.6 MB Go program: slow under -short and -race")
	}
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go toolchain")
		}
	}
	out := filepath.Join(t.TempDir(), "go_guest.wasm")
	cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = "testdata/go_guest"
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	code, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t)
	h := vmtest.NewHost(3)
	for _, iso := range []vm.Isolation{vm.Fresh, vm.Reuse} {
		start := time.Now()
		p, err := s.Compile(ctx, code, vm.Limits{Isolation: iso})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: compile %v", iso, time.Since(start))
		for i := 1; i <= 3; i++ {
			start := time.Now()
			res, err := p.Run(ctx, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "dims=3 runs=1"
			if iso == vm.Reuse {
				want = "dims=3 runs=" + string(rune('0'+i))
			}
			if string(res.Output) != want || len(res.Logs) != 1 || res.Logs[0] != "hello from Go at true" {
				t.Fatalf("%v run %d: %q logs %q", iso, i, res.Output, res.Logs)
			}
			t.Logf("%v: run %d took %v", iso, i, time.Since(start))
		}
	}
}

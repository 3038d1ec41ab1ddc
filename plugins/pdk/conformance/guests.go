package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
	"github.com/cubelinux/cube/vm/wasm"
)

// Lang is a guest language of the examples; it is also the name of the
// directory holding that language's build: examples/<program>/<lang>/.
type Lang string

// The guest languages.
const (
	Go  Lang = "go"  // GOOS=wasip1 with plugins/pdk/go
	C   Lang = "c"   // clang + wasi-libc with plugins/pdk/c/cube.h
	AS  Lang = "as"  // AssemblyScript with plugins/pdk/assemblyscript
	WAT Lang = "wat" // hand-written WebAssembly text
	JS  Lang = "js"  // JavaScript on goja
)

// Languages lists every language, WebAssembly ones first.
func Languages() []Lang { return []Lang{Go, C, AS, WAT, JS} }

// Has reports whether program is written in l: every program is, in every
// language, except kitcheck, which checks the guest kits and so has no
// hand-written WAT.
func Has(program string, l Lang) bool { return program != Kitcheck || l != WAT }

// Kind is the sandbox a language's programs run in.
func (l Lang) Kind() vm.Kind {
	if l == JS {
		return vm.JS
	}
	return vm.WASM
}

// File is the path of a program's build in a language under root (the
// examples directory, or a directory of rebuilt modules laid out the same
// way): root/<program>/<lang>/<program>.wasm, or .js for JavaScript.
func File(root, program string, l Lang) string {
	ext := ".wasm"
	if l == JS {
		ext = ".js"
	}
	return filepath.Join(root, program, string(l), program+ext)
}

// Sandboxes compiles guests of every language, caching one compiled program
// per (code, limits). It is safe for concurrent use.
type Sandboxes struct {
	wasm *wasm.Sandbox
	js   *js.Sandbox

	mu    sync.Mutex
	progs map[progKey]vm.Program
}

type progKey struct {
	path string
	lim  vm.Limits
}

// NewSandboxes starts one sandbox per runtime. cacheDir is wazero's
// compilation cache ("" keeps it in memory).
func NewSandboxes(ctx context.Context, cacheDir string) (*Sandboxes, error) {
	w, err := wasm.New(ctx, wasm.Options{CacheDir: cacheDir})
	if err != nil {
		return nil, err
	}
	return &Sandboxes{wasm: w, js: js.New(js.Options{}), progs: map[progKey]vm.Program{}}, nil
}

// Close closes both sandboxes and every program compiled through them.
func (s *Sandboxes) Close(ctx context.Context) error {
	err := s.wasm.Close(ctx)
	if err2 := s.js.Close(ctx); err == nil {
		err = err2
	}
	return err
}

// Program compiles the file at path (a .js file for JavaScript, WebAssembly
// otherwise) under lim, or returns the program compiled before.
func (s *Sandboxes) Program(ctx context.Context, path string, lim vm.Limits) (vm.Program, error) {
	k := progKey{path, lim}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.progs[k]; ok {
		return p, nil
	}
	code, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sb vm.Sandbox = s.wasm
	if filepath.Ext(path) == ".js" {
		sb = s.js
	}
	p, err := sb.Compile(ctx, code, lim)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", path, err)
	}
	s.progs[k] = p
	return p, nil
}

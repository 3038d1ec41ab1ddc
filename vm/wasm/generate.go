package wasm

// The test programs are WAT, built with wabt's wat2wasm; the .wasm files
// are committed beside their sources so tests need no toolchain.
//go:generate sh -c "cd testdata && for f in *.wat; do wat2wasm $f -o ${f%.wat}.wasm; done"

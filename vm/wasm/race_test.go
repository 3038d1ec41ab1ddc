//go:build race

package wasm_test

// raceEnabled: compiling a 2.6 MB Go guest takes ~30 s under -race.
const raceEnabled = true

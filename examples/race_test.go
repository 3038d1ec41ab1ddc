//go:build race

package examples_test

// raceEnabled: wazero compiling a 2.6 MB Go guest under the race detector
// takes ~50 s a module, so Go guests are left to the non-race run of
// .ci/check.d/examples.sh.
const raceEnabled = true

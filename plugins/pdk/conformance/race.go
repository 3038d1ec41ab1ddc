//go:build race

package conformance

// Race reports a race-enabled build. wazero compiles a 2.6 MB Go guest in
// ~50 s under the race detector, so tests skip Go guests then (and
// .ci/check.d/examples.sh runs them without it).
const Race = true

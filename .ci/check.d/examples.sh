#!/usr/bin/env bash
# Rebuilds every WebAssembly example from source into a temporary directory
# and runs the conformance table on each rebuilt module beside the committed
# one: both must give the table's outcomes, and the same ones (byte equality
# of .wasm files would be too strict across toolchain versions). Go guests,
# which the race-enabled test run skips, run here. Also vets the guest code
# for GOOS=wasip1.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

t0=$SECONDS
examples/build.sh "$out"
echo "examples: rebuilt in $((SECONDS - t0)) s"
GOOS=wasip1 GOARCH=wasm go vet ./plugins/pdk/go/ ./examples/aggregate/go/ ./examples/walk/go/ ./examples/writer/go/ ./examples/kitcheck/go/
t0=$SECONDS
go test -count=1 ./examples/ -rebuilt "$out"
go test -count=1 ./examples/aggregate/ ./examples/walk/ ./examples/writer/ ./examples/kitcheck/
echo "examples: conformance of committed and rebuilt modules in $((SECONDS - t0)) s"

#!/usr/bin/env bash
# The side-by-side bench (bench/, its own module so that the product does
# not depend on the peers): vet it and run its test, which loads a tiny
# data set into cube, bbolt, Pebble, SQLite and Redis and checks every
# answer against brute force. Redis comes from install.d/server.sh; with
# CI set the test fails rather than leave Redis out. -tags nosqlite leaves
# SQLite out here: compiling the pure-Go SQLite from a cold cache took
# most of 18 minutes on a loaded 2-core machine (task bench:peers keeps it).
set -euo pipefail
cd "$(dirname "$0")/../../bench"
t0=$SECONDS
go vet -tags nosqlite ./...
go test -tags nosqlite -count=1 ./...
echo "bench: vet and the tiny run in $((SECONDS - t0)) s"

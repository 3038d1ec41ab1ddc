#!/usr/bin/env bash
# Every command of README.md, docs/ and the examples' READMEs, as written
# and in order, on the built cube in a copy of the repository's files
# (cmd/cube/docs_test.go), the slow ones included (the demo on every city,
# a 10 s stress run); and every block a document marks as a shipped file
# is that file.
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
go test -count=1 -run 'TestDocCommands|TestDocFiles' ./cmd/cube -docs.run -docs.slow
echo "docs: every documented command ran in $((SECONDS - t0)) s"

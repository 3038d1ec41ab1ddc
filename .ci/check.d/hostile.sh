#!/usr/bin/env bash
# The JavaScript hostile corpus in full: every built-in reachable from the
# global object, called with every hostile pattern (huge lengths, large
# strings, shared references, deep nesting, huge array-likes) under a
# 16 MiB / 250 ms limit in worker processes. The race-enabled test run
# gives each built-in one pattern; this gives it all five, without the
# race detector's slowdown.
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
go test -count=1 -run 'TestHostileCorpus' -v ./vm/jsproc/ -hostile.all | grep -E '^(---|ok|FAIL|PASS)|hostile_test' || { echo "hostile corpus failed"; exit 1; }
echo "hostile: full corpus in $((SECONDS - t0)) s"

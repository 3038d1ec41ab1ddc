#!/usr/bin/env bash
# TestWALStoreSyncsEachAppend (server/cluster) counts the fsyncs of Raft's
# log store under strace: a store that returned before its data was on
# disk would pass every test that kills a process, whose writes the page
# cache keeps. Without strace it skips, but fails in CI.
set -euo pipefail
if command -v strace >/dev/null; then
	exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null || sudo="sudo"
if { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; } && command -v apt-get >/dev/null; then
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
else
	echo "strace.sh: install strace (the Raft log store's sync test uses it)" >&2
	exit 1
fi

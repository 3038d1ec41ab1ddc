#!/usr/bin/env bash
# The daemon's tests drive it with the real Redis tools: redis-cli and
# redis-benchmark (redis-tools), and compare with redis-server.
set -euo pipefail
if command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null; then
	exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null || sudo="sudo"
if { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; } && command -v apt-get >/dev/null; then
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools redis-server >/dev/null
	# The package starts a system redis-server; the benchmarks start their own.
	(command -v systemctl >/dev/null && $sudo systemctl stop redis-server 2>/dev/null) || true
else
	echo "server.sh: install redis-tools and redis-server (the daemon's tests use redis-cli and redis-benchmark)" >&2
	exit 1
fi

#!/usr/bin/env bash
# vs-redis.sh: redis-benchmark against cube's daemon (PUT/GET) and against
# redis-server (SET/GET) at the same durability, on Unix sockets, 3 runs each;
# prints requests/s per run and the median.
#
#   server/bench/vs-redis.sh [N=100000] [CLIENTS=50]
#
# cube --sync always is compared with appendfsync always, --sync interval
# with appendfsync everysec. Needs redis-server and redis-benchmark.
set -euo pipefail
N=${1:-100000}
C=${2:-50}
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/vsredis.XXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
go build -o "$W/cube" ./cmd/cube

rps() { # command... -> requests/s
	local prog=$1; shift
	"$prog" --csv "$@" 2>/dev/null | tail -1 | awk -F'","' '{gsub(/"/,"",$2); print int($2)}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run() { # label sock cmd...
	local label=$1 sock=$2; shift 2
	for p in 1 16; do
		local r=()
		for i in 1 2 3; do r+=("$(rps redis-benchmark -s "$sock" -n "$N" -c "$C" -P "$p" -r 100000 "$@")"); done
		printf '%-34s -P %-2s %10s   (%s)\n' "$label" "$p" "$(median "${r[@]}")" "${r[*]}"
	done
}

for mode in always:always interval:everysec; do
	cm=${mode%%:*}; rm_=${mode##*:}
	rm -rf "$W/data" "$W/redis"; mkdir -p "$W/redis"
	"$W/cube" serve --data "$W/data" --sync "$cm" 2>"$W/cube.log" &
	cpid=$!
	redis-server --port 0 --unixsocket "$W/redis/r.sock" --unixsocketperm 700 --dir "$W/redis" \
		--appendonly yes --appendfsync "$rm_" --save '' --daemonize no >"$W/redis.log" 2>&1 &
	rpid=$!
	for _ in $(seq 100); do [ -S "$W/data/cube.sock" ] && [ -S "$W/redis/r.sock" ] && break; sleep 0.1; done
	redis-cli -s "$W/data/cube.sock" NS.CREATE b DIMS 3 >/dev/null
	echo "== cube --sync $cm vs redis appendfsync $rm_ (n=$N, c=$C)"
	run "cube PUT b __rand_int__ 2 3 xyz" "$W/data/cube.sock" PUT b __rand_int__ 2 3 xyz
	run "redis SET key:__rand_int__ xyz" "$W/redis/r.sock" SET key:__rand_int__ xyz
	run "cube GET b __rand_int__ 2 3" "$W/data/cube.sock" GET b __rand_int__ 2 3
	run "redis GET key:__rand_int__" "$W/redis/r.sock" GET key:__rand_int__
	kill "$cpid" "$rpid"; wait "$cpid" "$rpid" 2>/dev/null || true
done

#!/usr/bin/env bash
# connmodel.sh: what the connection model alone costs per request, measured
# with redis-benchmark GET over Unix sockets against server/bench/connmodel
# in its two modes (a goroutine per connection, as cube's daemon serves;
# one epoll loop, as redis-server serves) and redis-server itself.
#
#   server/bench/connmodel.sh [N=100000] [CLIENTS=50]
#
# Each row runs REPS times (default 5), the three servers interleaved, and
# prints median requests/s and the median server CPU per request in
# microseconds (user+system from /proc, so less sensitive than requests/s
# to other load on a shared machine). -P 16 rows run 10*N requests.
set -euo pipefail
N=${1:-100000}
C=${2:-50}
REPS=${REPS:-5}
cd "$(dirname "$0")/../.."
command -v redis-benchmark >/dev/null || { echo "connmodel.sh: redis-benchmark not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
W=$(mktemp -d /tmp/connmodel.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$W"' EXIT
go build -o "$W/connmodel" ./server/bench/connmodel
"$W/connmodel" -mode go -sock "$W/go.sock" & pg=$!
"$W/connmodel" -mode epoll -sock "$W/epoll.sock" & pe=$!
redis-server --port 0 --unixsocket "$W/redis.sock" --unixsocketperm 700 --dir "$W" --save '' --appendonly no >/dev/null 2>&1 & pr=$!
for _ in $(seq 100); do [ -S "$W/go.sock" ] && [ -S "$W/epoll.sock" ] && [ -S "$W/redis.sock" ] && break; sleep 0.1; done
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== connection models, redis-benchmark GET -c $C (median of $REPS, interleaved; nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  %-28s %12s %14s\n' "server" "requests/s" "cpu us/req"
for p in 1 16; do
	n=$N; [ "$p" = 1 ] || n=$((N * 10))
	declare -A R=() U=()
	for _ in $(seq "$REPS"); do
		for s in go:$pg epoll:$pe redis:$pr; do
			name=${s%%:*} pid=${s##*:}
			a=$(cpu "$pid")
			r=$(redis-benchmark --csv -s "$W/$name.sock" -n "$n" -c "$C" -P "$p" GET k 2>/dev/null | tail -1 | awk -F'","' '{gsub(/"/,"",$2); print int($2)}')
			b=$(cpu "$pid")
			R[$name]+="$r " U[$name]+="$(awk -v a="$a" -v b="$b" -v n="$n" -v t="$tck" 'BEGIN {printf "%.2f", (b-a)/t*1e6/n}') "
		done
	done
	for name in go epoll redis; do
		# shellcheck disable=SC2086
		printf '  %-28s %12s %14s   (%s)\n' "$name -P $p" "$(median ${R[$name]})" "$(median ${U[$name]})" "${U[$name]% }"
	done
	unset R U
done

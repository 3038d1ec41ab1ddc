#!/usr/bin/env bash
# vs-redis.sh: cube's daemon against redis-server at the same durability, in
# one run, on Unix sockets: every row of issue 11 item 5.
#
#   server/bench/vs-redis.sh [N=100000] [CLIENTS=50]
#
# Rows, for cube --sync always vs appendfsync always, then --sync interval
# vs appendfsync everysec:
#   redis-benchmark -n N -c CLIENTS -P 1 and -P 16, one key, 3-byte values:
#     cube PUT b 0 xyz / GET b 0 (a 1-D namespace) vs redis SET k xyz / GET k;
#   64 go-redis writers (server/bench/writers), random keys: cube's daemon,
#     redis-server, and cube embedded (Namespace.Put, no daemon).
# Each row runs REPS times (default 3), cube and redis interleaved, so that
# load from other processes falls on both alike; it prints the median, the
# runs, and cube/redis (for the writers, daemon/embedded too). The
# redis-benchmark rows also print the server's median CPU per request
# (user+system from /proc), which other load on a shared machine skews
# less than requests/s; the writers rows print the client's CPU per write
# beside the server's (embedded: the whole process's, there is no
# server), which bounds what any server can reach on the same cores; the
# header notes nproc and the load average.
#
# Environment: REPS (3), DUR (writers' measured time, 5s), CUBE (a cube
# binary to use instead of building ./cmd/cube), WRITERS (64).
# Needs redis-server, redis-cli and redis-benchmark (apt-get install
# redis-server redis-tools).
set -euo pipefail
N=${1:-100000}
C=${2:-50}
REPS=${REPS:-3}
DUR=${DUR:-5s}
NW=${WRITERS:-64}
cd "$(dirname "$0")/../.."
for t in redis-server redis-cli redis-benchmark; do
	command -v "$t" >/dev/null || { echo "vs-redis.sh: $t not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
W=$(mktemp -d /tmp/vsredis.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$W"' EXIT
if [ -n "${CUBE:-}" ]; then
	cp "$CUBE" "$W/cube"
else
	go build -o "$W/cube" ./cmd/cube
fi
go build -o "$W/writers" ./server/bench/writers

tck=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; } # pid -> user+system ticks
rps() { # pid sock pipeline cmd... -> requests/s and the server's CPU us per request
	local pid=$1 sock=$2 p=$3 a b r; shift 3
	a=$(cpu "$pid")
	r=$(redis-benchmark --csv -s "$sock" -n "$N" -c "$C" -P "$p" "$@" 2>/dev/null |
		tail -1 | awk -F'","' '{gsub(/"/,"",$2); print int($2)}')
	b=$(cpu "$pid")
	echo "$r $(awk -v a="$a" -v b="$b" -v n="$N" -v t="$tck" 'BEGIN {printf "%.2f", (b-a)/t*1e6/n}')"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
row() { # label runs...
	local label=$1; shift
	printf '  %-40s %10s   (%s)\n' "$label" "$(median "$@")" "$*"
}
brow() { # label "rps cpu"... : a redis-benchmark row, with the server's CPU per request
	local label=$1 r=() u=() x; shift
	for x in "$@"; do r+=("${x% *}") u+=("${x#* }"); done
	printf '  %-40s %10s   %6s us cpu/req   (%s)\n' "$label" "$(median "${r[@]}")" "$(median "${u[@]}")" "${r[*]}"
}
first() { local x; for x in "$@"; do echo "${x%% *}"; done; }
wrun() { # server-pid writers-flags... -> "writes/s client-cpu-us/write server-cpu-us/write"
	local pid=$1 a=0 b=0 out; shift
	[ -z "$pid" ] || a=$(cpu "$pid")
	out=$("$W/writers" -writers "$NW" -duration "$DUR" -cpu "$@")
	[ -z "$pid" ] || b=$(cpu "$pid")
	# shellcheck disable=SC2086
	set -- $out
	echo "$1 $2 $(awk -v a="$a" -v b="$b" -v n="$3" -v t="$tck" 'BEGIN {printf "%.2f", (b-a)/t*1e6/n}')"
}
wrow() { # label "rate client-cpu server-cpu"...: the writers' row, with both sides' CPU per write
	local label=$1 r=() c=() s=() x; shift
	for x in "$@"; do
		# shellcheck disable=SC2086
		set -- $x
		r+=("$1") c+=("$2") s+=("$3")
	done
	printf '  %-40s %10s   client %6s + server %6s us cpu/write   (%s)\n' "$label" "$(median "${r[@]}")" "$(median "${c[@]}")" "$(median "${s[@]}")" "${r[*]}"
}

for mode in always:always interval:everysec; do
	cm=${mode%%:*}; rm_=${mode##*:}
	rm -rf "$W/data" "$W/redis" "$W/emb"; mkdir -p "$W/redis" "$W/emb"
	"$W/cube" serve --data "$W/data" --sync "$cm" 2>"$W/cube.log" &
	cpid=$!
	redis-server --port 0 --unixsocket "$W/redis/r.sock" --unixsocketperm 700 --dir "$W/redis" \
		--appendonly yes --appendfsync "$rm_" --save '' --daemonize no >"$W/redis.log" 2>&1 &
	rpid=$!
	for _ in $(seq 100); do [ -S "$W/data/cube.sock" ] && [ -S "$W/redis/r.sock" ] && break; sleep 0.1; done
	cs=$W/data/cube.sock rs=$W/redis/r.sock
	redis-cli -s "$cs" NS.CREATE b DIMS 1 >/dev/null
	redis-cli -s "$cs" PUT b 0 xyz >/dev/null
	redis-cli -s "$rs" SET k xyz >/dev/null
	echo "== cube --sync $cm vs redis appendfsync $rm_ (redis-benchmark -n $N -c $C; $NW writers for $DUR; median of $REPS, interleaved; nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg))"
	for p in 1 16; do
		cp_=() rp=() cg=() rg=()
		for _ in $(seq "$REPS"); do
			cp_+=("$(rps "$cpid" "$cs" "$p" PUT b 0 xyz)")
			rp+=("$(rps "$rpid" "$rs" "$p" SET k xyz)")
			cg+=("$(rps "$cpid" "$cs" "$p" GET b 0)")
			rg+=("$(rps "$rpid" "$rs" "$p" GET k)")
		done
		brow "cube PUT b 0 xyz -P $p" "${cp_[@]}"
		brow "redis SET k xyz -P $p" "${rp[@]}"
		# shellcheck disable=SC2046
		echo "    cube/redis $(ratio "$(median $(first "${cp_[@]}"))" "$(median $(first "${rp[@]}"))")"
		brow "cube GET b 0 -P $p" "${cg[@]}"
		brow "redis GET k -P $p" "${rg[@]}"
		# shellcheck disable=SC2046
		echo "    cube/redis $(ratio "$(median $(first "${cg[@]}"))" "$(median $(first "${rg[@]}"))")"
	done
	cw=() rw=() ew=()
	for i in $(seq "$REPS"); do
		cw+=("$(wrun "$cpid" -target cube -sock "$cs")")
		rw+=("$(wrun "$rpid" -target redis -sock "$rs")")
		ew+=("$(wrun "" -target embedded -dir "$W/emb/$i" -sync "$cm")")
	done
	wrow "cube daemon $NW writers PUT" "${cw[@]}"
	wrow "redis $NW writers SET" "${rw[@]}"
	wrow "cube embedded $NW writers Put" "${ew[@]}"
	# shellcheck disable=SC2046
	echo "    cube/redis $(ratio "$(median $(first "${cw[@]}"))" "$(median $(first "${rw[@]}"))")  daemon/embedded $(ratio "$(median $(first "${cw[@]}"))" "$(median $(first "${ew[@]}"))")"
	kill "$cpid" "$rpid"; wait "$cpid" "$rpid" 2>/dev/null || true
done

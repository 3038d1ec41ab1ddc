#!/usr/bin/env bash
# Tools to rebuild the WebAssembly examples (examples/build.sh): clang, lld,
# wasi-libc and the wasm32 compiler runtime from Debian, wabt, Node.js/npm,
# and the AssemblyScript compiler pinned by plugins/pdk/assemblyscript's
# package-lock.json. Quick when everything is there already.
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
command -v clang >/dev/null || need+=(clang)
command -v wasm-ld >/dev/null || need+=(lld)
command -v wat2wasm >/dev/null || need+=(wabt)
[ -e /usr/lib/wasm32-wasi/libc.a ] || need+=(wasi-libc)
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null || need+=(libclang-rt-14-dev-wasm32)
command -v npm >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
	echo "examples: apt-get install ${need[*]}"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null; then
			sudo="sudo"
		else
			echo "examples: not root and no sudo; install ${need[*]} by hand" >&2
			exit 1
		fi
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# npm ci only when node_modules does not match the lock file.
kit=plugins/pdk/assemblyscript
if ! cmp -s "$kit/package-lock.json" "$kit/node_modules/.package-lock.stamp" 2>/dev/null || [ ! -x "$kit/node_modules/.bin/asc" ]; then
	(cd "$kit" && npm ci --no-audit --no-fund --loglevel=error)
	cp "$kit/package-lock.json" "$kit/node_modules/.package-lock.stamp"
fi

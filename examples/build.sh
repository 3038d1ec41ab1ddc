#!/usr/bin/env bash
# Rebuilds the WebAssembly examples from source.
#
#   examples/build.sh            rebuild in place (then commit the .wasm files)
#   examples/build.sh OUTDIR     build into OUTDIR/<program>/<lang>/<program>.wasm
#   examples/build.sh OUTDIR go  one language only (go, c, as, wat)
#
# kitcheck, which exercises the guest kits, has no hand-written WAT.
#
# Tools: Go (GOOS=wasip1), Debian's clang + lld + wasi-libc +
# libclang-rt-14-dev-wasm32, AssemblyScript from npm (`npm ci` in
# plugins/pdk/assemblyscript), wabt's wat2wasm. .ci/install.d/examples.sh
# installs them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
out=$(mkdir -p "$out" && cd "$out" && pwd)
only=${2:-}
pdk=$here/../plugins/pdk

for prog in aggregate walk writer kitcheck; do
	for lang in go c as wat; do
		[ -z "$only" ] || [ "$only" = "$lang" ] || continue
		[ -e "$here/$prog/$lang" ] || continue # kitcheck has no WAT
		dst=$out/$prog/$lang/$prog.wasm
		mkdir -p "$(dirname "$dst")"
		src=$here/$prog/$lang
		case $lang in
		go) (cd "$src" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s -o "$dst" .) ;;
		c) clang --target=wasm32-wasi --sysroot=/usr -O2 -Wall -Werror -mexec-model=reactor \
			-I "$pdk/c" -Wl,--strip-all -o "$dst" "$src/$prog.c" ;;
		as) "$src/build.sh" "$prog" "$dst" ;;
		wat) wat2wasm "$src/$prog.wat" -o "$dst" ;;
		esac
	done
done

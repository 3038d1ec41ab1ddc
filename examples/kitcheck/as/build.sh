#!/bin/sh
# Builds an AssemblyScript example with the compiler pinned by the kit's
# package.json (run `npm ci` in plugins/pdk/assemblyscript first).
# Usage: ./build.sh NAME [OUT]   (NAME.ts -> OUT, default NAME.wasm)
set -eu
cd "$(dirname "$0")"
name=$1
out=${2:-$name.wasm}
exec ../../../plugins/pdk/assemblyscript/node_modules/.bin/asc "$name.ts" \
	--runtime incremental -O3 --noAssert \
	--use abort=../../../plugins/pdk/assemblyscript/assembly/index/abort -o "$out"

#!/usr/bin/env bash
# The cluster's partition tests (server/cluster/partition_test.go) run each
# node in a network namespace of its own and cut the links between them
# with ip (iproute2): ip netns, veth, a bridge and policy routing rules.
# They need root; without it they skip, but a missing ip fails them in CI.
set -euo pipefail
if command -v ip >/dev/null; then
	exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || ! command -v sudo >/dev/null || sudo="sudo"
if { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; } && command -v apt-get >/dev/null; then
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
else
	echo "netns.sh: install iproute2 (the cluster's partition tests use ip)" >&2
	exit 1
fi

#!/usr/bin/env bash
# Installs upstream istioctl at the pinned version (hack/upstream.env) into bin/upstream
# once (~20 minutes cold) and prints its path. The benchmarks and conformance call it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=upstream.env
. "$root/hack/upstream.env"
UPSTREAM=$root/bin/upstream/istioctl
if [ ! -x "$UPSTREAM" ] || [ "$(cat "$root/bin/upstream/VERSION" 2>/dev/null)" != "$UPSTREAM_VERSION" ]; then
	echo "[upstream] installing upstream istioctl $UPSTREAM_VERSION into bin/upstream (once; ~20 minutes cold)" >&2
	mkdir -p "$root/bin/upstream"
	# Outside our module, so its requirements never touch our go.mod.
	(cd "$(mktemp -d)" && GOBIN="$root/bin/upstream" GOFLAGS=-mod=mod \
		go install "istio.io/istio/istioctl/cmd/istioctl@$UPSTREAM_VERSION")
	echo "$UPSTREAM_VERSION" >"$root/bin/upstream/VERSION"
fi
echo "$UPSTREAM"

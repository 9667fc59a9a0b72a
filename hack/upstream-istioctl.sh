#!/usr/bin/env bash
# Installs upstream istioctl at the pinned version (hack/upstream.env) once per machine (~20
# minutes cold), into a cache outside the checkout as hack/kube/build.sh does, links it into
# bin/upstream and prints its path. The benchmarks and conformance call it; a fresh clone
# reuses the cache.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=upstream.env
. "$root/hack/upstream.env"
CACHE_ROOT=${ISTIOCTL_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/istioctl-kube}
CACHE=$CACHE_ROOT/upstream-istioctl-$UPSTREAM_VERSION
mkdir -p "$CACHE" "$root/bin/upstream"
# Under a lock: two first runs at once build it once.
exec 8>"$CACHE/.lock"
flock 8
if [ ! -x "$CACHE/istioctl" ]; then
	echo "[upstream] installing upstream istioctl $UPSTREAM_VERSION into $CACHE (once per machine; ~20 minutes cold)" >&2
	gobin=$(mktemp -d)
	# Outside our module, so its requirements never touch our go.mod.
	(cd "$gobin" && GOBIN="$gobin" GOFLAGS=-mod=mod go install "istio.io/istio/istioctl/cmd/istioctl@$UPSTREAM_VERSION")
	mv -f "$gobin/istioctl" "$CACHE/istioctl"
	rm -rf "$gobin"
fi
ln -sfn "$CACHE/istioctl" "$root/bin/upstream/istioctl"
echo "$UPSTREAM_VERSION" >"$root/bin/upstream/VERSION"
echo "$root/bin/upstream/istioctl"

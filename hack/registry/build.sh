#!/usr/bin/env bash
# Builds the test bed's container registry (bin/registry): distribution's registry v3 from the
# Go module proxy, wrapped with only the filesystem storage driver (main.go here), once per
# machine, as hack/helm/build.sh builds helm. The images tests push and mirror never leave
# loopback.
#
# Its own module keeps distribution's dependencies out of istioctl's go.mod and binary.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}

VERSION=$(awk '$1 == "github.com/distribution/distribution/v3" { print $2 } $1 == "require" && $2 == "github.com/distribution/distribution/v3" { print $3 }' "$here/go.mod")
key=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
CACHE_ROOT=${ISTIOCTL_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/istioctl-kube}
CACHE="$CACHE_ROOT/registry-$VERSION-$key"
mkdir -p "$CACHE" "$BIN"

log() { printf '[registry-build] %s\n' "$*" >&2; }

# Under a lock: two first runs at once build it once.
exec 8>"$CACHE/.registry.lock"
flock 8
if [ ! -f "$CACHE/registry" ]; then
	start=$SECONDS
	log "building distribution registry $VERSION (first time on this machine; cached in $CACHE)"
	tmp="$CACHE/.registry.tmp.$$"
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" .)
	mv -f "$tmp" "$CACHE/registry"
	log "built registry in $((SECONDS - start))s"
fi
ln -sfn "$CACHE/registry" "$BIN/registry"
log "registry ready in $BIN (-> $CACHE)"

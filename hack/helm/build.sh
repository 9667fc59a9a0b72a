#!/usr/bin/env bash
# Builds the helm CLI the migration tests drive (bin/helm) from the Go module proxy, once
# per machine, as hack/kube/build.sh builds the cluster's binaries.
#
# Its own module (go.mod here) keeps Helm's CLI and action packages out of istioctl's
# go.mod and binary; the binary lives in a cache outside the checkout, keyed by that
# module, and bin/ only holds a symlink into it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}

HELM_VERSION=$(awk '$1 == "require" && $2 == "helm.sh/helm/v3" { print $3 }' "$here/go.mod")
# Bump BUILD_REV when a change here changes the binary itself (flags, stamps).
BUILD_REV=1
key=$( (echo "$BUILD_REV"; cat "$here/go.mod" "$here/go.sum") | sha256sum | cut -c1-12)
CACHE_ROOT=${ISTIOCTL_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/istioctl-kube}
CACHE="$CACHE_ROOT/helm-$HELM_VERSION-$key"
mkdir -p "$CACHE" "$BIN"

log() { printf '[helm-build] %s\n' "$*" >&2; }

# Under a lock: two first runs at once build it once.
exec 8>"$CACHE/.helm.lock"
flock 8
if [ ! -f "$CACHE/helm" ]; then
	start=$SECONDS
	log "building helm $HELM_VERSION (first time on this machine; cached in $CACHE)"
	tmp="$CACHE/.helm.tmp.$$"
	# The version stamp is what `helm version` prints; the module gives no VCS stamp.
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" -o "$tmp" helm.sh/helm/v3/cmd/helm)
	mv -f "$tmp" "$CACHE/helm"
	log "built helm in $((SECONDS - start))s"
fi
ln -sfn "$CACHE/helm" "$BIN/helm"
log "helm ready in $BIN (-> $CACHE)"

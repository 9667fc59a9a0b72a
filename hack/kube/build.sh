#!/usr/bin/env bash
# Builds the test bed's third-party binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok, pilot-discovery, helm) from the Go module proxy, once per
# machine, and ours (fakelb, realistiod) from this module.
#
# The third-party ones come from one module (bedbuild/): one version of each library they
# share (client-go, apimachinery, gRPC, protobuf, OpenTelemetry), compiled once by one
# `go build` of them all, with the flags our own builds use, so our tests' compile finds
# much of it in the build cache too. They live in a cache outside the checkout, keyed by
# that module, so a fresh clone (as CI makes) links them instead of rebuilding; bin/ only
# holds symlinks into it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}
mod=$here/bedbuild

version() { awk -v m="$1" '$1 == m { print $2 }' "$mod/go.mod"; }
K8S_VERSION=$(version k8s.io/kubernetes)
KWOK_VERSION=$(version sigs.k8s.io/kwok)
HELM_VERSION=$(version helm.sh/helm/v3)
ISTIO_VERSION=$(version istio.io/istio)
# The bed's real istiod is pilot-discovery at the version upstream istioctl is pinned to.
. "$root/hack/upstream.env"
if [ "$ISTIO_VERSION" != "$UPSTREAM_VERSION" ]; then
	echo "[kube-build] hack/kube/bedbuild pins istio.io/istio $ISTIO_VERSION, hack/upstream.env $UPSTREAM_VERSION: run (cd hack/kube/bedbuild && go get istio.io/istio@$UPSTREAM_VERSION && go mod tidy)" >&2
	exit 1
fi

# The key covers what the binaries are made from, not this script, so editing the
# script's plumbing does not cost a rebuild. Bump BUILD_REV when a change here changes
# the binaries themselves (flags, stamps).
BUILD_REV=1
key=$( (echo "$BUILD_REV"; cat "$mod/go.mod" "$mod/go.sum" "$mod/etcd/main.go") | sha256sum | cut -c1-12)
CACHE_ROOT=${ISTIOCTL_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/istioctl-kube}
CACHE="$CACHE_ROOT/bed-k8s-$K8S_VERSION-$key"
mkdir -p "$CACHE" "$BIN"

log() { printf '[kube-build] %s\n' "$*" >&2; }

# name=package of each binary the module builds.
bins=(
	etcd=./etcd
	kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver
	kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager
	kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler
	kubectl=k8s.io/kubernetes/cmd/kubectl
	kwok=sigs.k8s.io/kwok/cmd/kwok
	pilot-discovery=istio.io/istio/pilot/cmd/pilot-discovery
	helm=helm.sh/helm/v3/cmd/helm
)

# Under one lock: two first runs at once (make demo beside make cluster-up) build once,
# the second waiting for the first.
exec {lock}>"$CACHE/.build.lock"
flock "$lock"
missing=() pkgs=()
for b in "${bins[@]}"; do
	[ -f "$CACHE/${b%%=*}" ] || { missing+=("${b%%=*}"); pkgs+=("${b#*=}"); }
done
if [ ${#missing[@]} -gt 0 ]; then
	start=$SECONDS
	log "building ${missing[*]} (first time on this machine; cached in $CACHE)"
	tmp=$(mktemp -d "$CACHE/.tmp.XXXXXX")
	# One link flag set for all: -X of a package a binary does not link is ignored. The
	# stamps are what `kubectl version` and `helm version` print; the module gives none.
	v=k8s.io/component-base/version minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
	(cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
		-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor \
		-X $v.gitTreeState=clean -X $v.gitCommit=istioctl-local-build \
		-X $v.buildDate=1970-01-01T00:00:00Z \
		-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" -o "$tmp/" "${pkgs[@]}")
	for m in "${missing[@]}"; do mv -f "$tmp/$m" "$CACHE/$m"; done
	rm -rf "$tmp"
	log "built ${missing[*]} in $((SECONDS - start))s"
fi

# The kwok Stages that kwokctl uses by default (node init and heartbeat, pod ready, complete
# and delete) and its Logs and PortForward CRDs, which realistiod uses to make `kubectl logs`
# and port-forward reach istiod (installed by up.sh): from the kwok module, to match the binary.
kwokmod=$(cd "$mod" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
if [ ! -f "$CACHE/kwok-stages.yaml" ]; then
	first=1
	for s in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
		pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
		[ $first = 1 ] || echo '---'
		first=0
		cat "$kwokmod/kustomize/stage/$s.yaml"
	done >"$CACHE/.kwok-stages.yaml.tmp"
	mv -f "$CACHE/.kwok-stages.yaml.tmp" "$CACHE/kwok-stages.yaml"
fi
if [ ! -f "$CACHE/kwok-crds.yaml" ]; then
	crds=$kwokmod/kustomize/crd/bases
	cat "$crds/kwok.x-k8s.io_logs.yaml" - "$crds/kwok.x-k8s.io_portforwards.yaml" <<<'---' >"$CACHE/.kwok-crds.yaml.tmp"
	mv -f "$CACHE/.kwok-crds.yaml.tmp" "$CACHE/kwok-crds.yaml"
fi
exec {lock}>&-

for b in "${bins[@]}" kwok-stages.yaml= kwok-crds.yaml=; do
	ln -sfn "$CACHE/${b%%=*}" "$BIN/${b%%=*}"
done

# build NAME CMD...: runs CMD to produce $tmp (the binary) unless NAME is in $CACHE, under a
# lock per entry.
build() {
	local name=$1; shift
	[ -f "$CACHE/$name" ] && return 0
	local lock
	exec {lock}>"$CACHE/.$name.lock"
	flock "$lock"
	if [ -f "$CACHE/$name" ]; then
		exec {lock}>&-
		return 0
	fi
	local tmp="$CACHE/.$name.tmp.$$"
	local start=$SECONDS
	log "building $name (first time on this machine; cached in $CACHE)"
	tmp="$tmp" "$@"
	mv -f "$tmp" "$CACHE/$name"
	exec {lock}>&-
	log "built $name in $((SECONDS - start))s"
}

# fakelb (the bed's load balancer addresses) is ours, built from the main module in
# seconds. It is cached under the hash of its sources like the rest: a rebuild must not
# replace the file a running fakelb was started from, or down.sh, which only signals
# processes whose binary is still the recorded one, would no longer recognise it.
fakelb_key=$( (cd "$root" && cat go.mod go.sum hack/fakelb/*.go hack/internal/loopback/*.go) | sha256sum | cut -c1-12)
FAKELB_CACHE=$CACHE_ROOT/fakelb-$fakelb_key
mkdir -p "$FAKELB_CACHE"
fakelb_cmd() { (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" ./hack/fakelb); }
CACHE=$FAKELB_CACHE build fakelb fakelb_cmd
ln -sfn "$FAKELB_CACHE/fakelb" "$BIN/fakelb"
# realistiod runs it in the bed (hack/realistiod), built and cached like fakelb.
realistiod_key=$( (cd "$root" && cat go.mod go.sum hack/realistiod/*.go hack/internal/loopback/*.go) | sha256sum | cut -c1-12)
REALISTIOD_CACHE=$CACHE_ROOT/realistiod-$realistiod_key
mkdir -p "$REALISTIOD_CACHE"
realistiod_cmd() { (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" ./hack/realistiod); }
CACHE=$REALISTIOD_CACHE build realistiod realistiod_cmd
ln -sfn "$REALISTIOD_CACHE/realistiod" "$BIN/realistiod"

log "binaries ready in $BIN"

#!/usr/bin/env bash
# Builds the local test cluster's binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok) from the Go module proxy, once per machine.
#
# The binaries live in a cache outside the checkout, keyed by the versions and by the
# build inputs, so a fresh clone (as CI makes) links them instead of rebuilding; bin/
# only holds symlinks into it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

# The key covers what the binaries are made from, not this script, so editing the
# script's plumbing does not cost a 20-minute rebuild. Bump BUILD_REV when a change
# here changes the binaries themselves (flags, stamps).
BUILD_REV=1
key=$( (echo "$BUILD_REV"; cat "$here/kubebuild/go.mod" "$here/kubebuild/go.sum" \
	"$here/etcdbuild/go.mod" "$here/etcdbuild/go.sum" "$here/etcdbuild/main.go") | sha256sum | cut -c1-12)
CACHE_ROOT=${ISTIOCTL_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/istioctl-kube}
CACHE="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-$key"
mkdir -p "$CACHE" "$BIN"

log() { printf '[kube-build] %s\n' "$*" >&2; }

# build NAME CMD...: runs CMD to produce $tmp (the binary) unless NAME is cached. Under a
# lock per entry: two first runs at once (make demo beside make cluster-up) build it once,
# the second waiting for the first.
build() {
	local name=$1; shift
	if [ -f "$CACHE/$name" ]; then
		return 0
	fi
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

kube_cmd() {
	local cmd=$1
	local pkg=k8s.io/component-base/version
	local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
	(cd "$here/kubebuild" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
		-X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor \
		-X $pkg.gitTreeState=clean -X $pkg.gitCommit=istioctl-local-build \
		-X $pkg.buildDate=1970-01-01T00:00:00Z" -o "$tmp" "k8s.io/kubernetes/cmd/$cmd")
}

etcd_cmd() {
	(cd "$here/etcdbuild" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" .)
}

kwok_cmd() {
	local gobin; gobin=$(mktemp -d)
	CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	mv "$gobin/kwok" "$tmp"
	rmdir "$gobin"
}

# The kwok Stages that kwokctl uses by default: node init and heartbeat, pod ready,
# complete and delete. Taken from the kwok module so they match the binary.
stages_cmd() {
	local mod; mod=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION
	[ -d "$mod" ] || (cd "$here/kubebuild" && go mod download "sigs.k8s.io/kwok@$KWOK_VERSION")
	local s first=1
	for s in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
		pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
		[ $first = 1 ] || echo '---'
		first=0
		cat "$mod/kustomize/stage/$s.yaml"
	done >"$tmp"
}

build etcd etcd_cmd
build kube-apiserver kube_cmd kube-apiserver
build kube-controller-manager kube_cmd kube-controller-manager
build kube-scheduler kube_cmd kube-scheduler
build kubectl kube_cmd kubectl
build kwok kwok_cmd
build kwok-stages.yaml stages_cmd

for f in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages.yaml; do
	ln -sfn "$CACHE/$f" "$BIN/$f"
done

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
# The bed's real istiod: pilot-discovery from the istio.io/istio module at the version the
# project pins for upstream istioctl (hack/upstream.env), cached under its own key so that a
# new pin rebuilds it alone (~20 minutes cold, ~4 with istioctl's build cache warm).
. "$root/hack/upstream.env"
PILOT_CACHE=$CACHE_ROOT/pilot-discovery-$UPSTREAM_VERSION-1
mkdir -p "$PILOT_CACHE"
pilot_cmd() {
	local gobin; gobin=$(mktemp -d)
	# Outside our module, so its requirements never touch our go.mod.
	(cd "$gobin" && CGO_ENABLED=0 GOBIN="$gobin" GOFLAGS=-mod=mod go install -trimpath -ldflags "-s -w" \
		"istio.io/istio/pilot/cmd/pilot-discovery@$UPSTREAM_VERSION")
	mv "$gobin/pilot-discovery" "$tmp"
	rm -rf "$gobin"
}
CACHE=$PILOT_CACHE build pilot-discovery pilot_cmd
ln -sfn "$PILOT_CACHE/pilot-discovery" "$BIN/pilot-discovery"

# realistiod runs it in the bed (hack/realistiod), built and cached like fakelb.
realistiod_key=$( (cd "$root" && cat go.mod go.sum hack/realistiod/*.go hack/internal/loopback/*.go) | sha256sum | cut -c1-12)
REALISTIOD_CACHE=$CACHE_ROOT/realistiod-$realistiod_key
mkdir -p "$REALISTIOD_CACHE"
realistiod_cmd() { (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" ./hack/realistiod); }
CACHE=$REALISTIOD_CACHE build realistiod realistiod_cmd
ln -sfn "$REALISTIOD_CACHE/realistiod" "$BIN/realistiod"

# kwok's Logs and PortForward kinds, which realistiod uses to make `kubectl logs` and
# port-forward reach istiod: their CRDs from the kwok module, installed by up.sh.
crds_cmd() {
	local mod; mod=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION
	[ -d "$mod" ] || (cd "$here/kubebuild" && go mod download "sigs.k8s.io/kwok@$KWOK_VERSION")
	cat "$mod/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" - "$mod/kustomize/crd/bases/kwok.x-k8s.io_portforwards.yaml" <<<'---' >"$tmp"
}
build kwok-crds.yaml crds_cmd
ln -sfn "$CACHE/kwok-crds.yaml" "$BIN/kwok-crds.yaml"
log "binaries ready in $BIN (-> $CACHE)"

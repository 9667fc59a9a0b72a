#!/usr/bin/env bash
# The README's test command (make test): every unit and e2e test.
#
# Outside the sandbox it downloads modules, builds the cluster binaries (cached per machine)
# and compiles every test binary; then it re-runs itself in a network namespace that has only
# loopback, starts one local control plane there, runs `go test ./...` against it and stops it.
# Multi-cluster tests (cluster.GetBed) start the bed's clusters in the sandbox when the first
# one asks; they serve every later test binary too and are stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
log() { printf '[test] %s\n' "$*" >&2; }

if [ "${1:-}" != "--inside" ]; then
	go mod download
	"$root/hack/kube/build.sh"
	# The helm CLI the migration tests drive, and upstream's charts they install with it
	# (the istio.io/istio module at the version hack/bench.sh pins), both cached per machine.
	"$root/hack/helm/build.sh"
	# The container registry the images tests push to and mirror between (cached per machine).
	"$root/hack/registry/build.sh"
	. "$root/hack/upstream.env"
	go mod download "istio.io/istio@$UPSTREAM_VERSION"
	log "compiling packages and test binaries"
	go vet ./...
	go test -count=1 -run '^$' ./... >/dev/null
	# Pin Go's caches to where they are now: the sandbox gets its own HOME.
	export GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
	if [ "$(id -u)" = 0 ]; then
		exec unshare --net -- "$0" --inside
	fi
	# Without root: a user namespace maps us to root inside, which may create the netns.
	exec unshare --map-root-user --net -- "$0" --inside
fi

# --- inside the loopback-only network namespace ---------------------------------------
ip link set lo up
tmp=$(mktemp -d /tmp/istioctl-test.XXXXXX)
export STATE=$tmp/cluster
# report STATE NAME: after a failed run, what a cluster's state says went wrong before it
# goes: the real istiods that exited (and their last lines), and the components that are no
# longer running (and the end of their logs).
report() {
	local st=$1 name=$2 f pid exe component
	if grep -q "istiod exited" "$st/logs/realistiod.log" 2>/dev/null; then
		log "$name: istiods that exited during the run (realistiod's log):"
		grep -A5 "istiod exited" "$st/logs/realistiod.log" | tail -60 >&2
	fi
	for f in "$st"/pids/*.pid; do
		[ -f "$f" ] || continue
		read -r pid exe <"$f"
		[ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" != "$exe" ] || continue
		component=$(basename "$f" .pid)
		log "$name: $component (pid $pid) is not running; the end of its log:"
		tail -n 15 "$st/logs/$component.log" 2>/dev/null | sed 's/^/  /' >&2
	done
}
cleanup() {
	local rc=$? st
	if [ $rc != 0 ]; then
		report "$STATE" "the shared cluster"
		for st in "$tmp"/bed/cluster-*; do
			[ ! -d "$st" ] || report "$st" "bed $(basename "$st")"
		done
	fi
	[ ! -d "$tmp/bed" ] || STATE=$tmp/bed "$root/hack/kube/bed-down.sh" || true
	"$root/hack/kube/down.sh" || true
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Tests and the tools they run never touch the user's ~/.kube or ~/.istioctl, and what
# they leave in the temporary directory (builds at other versions, private clusters) goes
# with the run.
export HOME=$tmp/home TMPDIR=$tmp/tmp
mkdir -p "$HOME" "$TMPDIR"
# ISTIOCTL_TEST_REAL_ISTIOD=0 runs the bed without a real istiod (the tests that need one fail).
REAL_ISTIOD=${ISTIOCTL_TEST_REAL_ISTIOD:-1} "$root/hack/kube/up.sh" >/dev/null
export ISTIOCTL_TEST_KUBECONFIG=$STATE/kubeconfig KUBECACHEDIR=$STATE/kubecache
export ISTIOCTL_TEST_BED=$tmp/bed ISTIOCTL_TEST_BED_OWNER=$$
unset KUBECONFIG
# Nothing may be fetched from here on: there is no network, and there must be no need.
export GOPROXY=off GOFLAGS=-mod=readonly
log "running go test ./... against the local cluster"
# One package at a time: the e2e packages share the cluster, and some install and purge
# cluster-wide objects (CRDs, webhooks). pkg/cmd's e2e tests take ~16 minutes on 2 quiet
# cores and up to 25 on busy ones; the limit per test binary is a safety net for a hung
# test, not the budget (the whole run's is 30 minutes on a quiet machine).
go test -count=1 -p 1 -timeout 40m ${TEST_FLAGS:-} ./...
if [ -z "${TEST_FLAGS:-}" ]; then
	log "short fuzz runs, 20000 execs each (make fuzz runs them for 2 minutes each)"
	"$root/hack/fuzz.sh" "${FUZZTIME:-20000x}"
fi

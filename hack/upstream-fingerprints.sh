#!/usr/bin/env bash
# Records what upstream istioctl master renders for each profile (and a revisioned install)
# as fingerprints under testdata/upstream/, with our default hub and tag. The render tests
# compare our output against them. Needs bin/upstream/istioctl (see hack/bench-spec.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
UPSTREAM=$root/bin/upstream/istioctl
[ -x "$UPSTREAM" ] || { echo "bin/upstream/istioctl is missing: run make bench-spec once to install it" >&2; exit 1; }
mkdir -p testdata/upstream
go build -o bin/fingerprint ./hack/fingerprint
ISTIO_VERSION=$(hack/istio-version.sh)
export HOME=$(mktemp -d) KUBECONFIG=/nonexistent
gen() { # name args...
	local name=$1; shift
	(cd "$HOME" && "$UPSTREAM" manifest generate --set hub=docker.io/istio --set tag="$ISTIO_VERSION" "$@") | bin/fingerprint >"testdata/upstream/$name.json"
	echo "testdata/upstream/$name.json" >&2
}
for p in default demo minimal empty ambient remote preview stable openshift openshift-ambient; do
	gen "$p" --set profile=$p
done
gen default-revision-canary --set revision=canary

#!/usr/bin/env bash
# What the Base CRDs' validation costs an install: the apiserver compiles every CEL rule of a
# CRD's schema (and estimates its cost) before the CRD is established. Installs Base alone
# (profile empty + Base) with this tree's istioctl into one local cluster, RUNS rounds, each
# with the CRDs of BASE (default 23e45da, the last commit whose CRDs came from the Go
# descriptors: no descriptions, no CEL rules, no limits) and with this
# tree's, alternating which goes first; the charts differ only in crd-all.gen.yaml (passed
# with --manifests). Between installs, uninstall --purge and wait until the CRDs are gone.
# Prints per CRD file the median wall time of the install and the kube-apiserver's CPU time
# spent during it. Reports only: no limit.
#
#   RUNS=7 BASE=23e45da hack/bench-crds.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
RUNS=${RUNS:-7}
BASE=${BASE:-23e45da}
crds=manifests/charts/base/crds/crd-all.gen.yaml
make -s build cluster-bin >/dev/null
work=$(mktemp -d)
export STATE=$work/cluster HOME=$work/home
mkdir -p "$HOME"
trap 'hack/kube/down.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Two manifests directories, the same but for the CRD file. The old file gets this tree's
# chart labels, so both render the same way (printed as written, not relabelled).
v=$(hack/istio-version.sh)
for d in old new; do
	mkdir -p "$work/$d"
	cp -r manifests/charts profiles "$work/$d/"
	rm -f "$work/$d/profiles/"*.go
done
git show "$BASE:$crds" |
	sed -E "s/^(    app.kubernetes.io\/version: ).*/\1$v/; s/^(    helm.sh\/chart: base-).*/\1$v/" >"$work/old/charts/base/crds/crd-all.gen.yaml"
echo "CRD files: $BASE $(wc -c <"$work/old/charts/base/crds/crd-all.gen.yaml") bytes, $(grep -cE '^ +(- )?rule: ' "$work/old/charts/base/crds/crd-all.gen.yaml" || true) CEL rules;" \
	"this tree $(wc -c <"$crds") bytes, $(grep -cE '^ +(- )?rule: ' "$crds") CEL rules"

hack/kube/up.sh >/dev/null 2>&1
export KUBECONFIG=$STATE/kubeconfig
read -r apiserver _ <"$STATE/pids/kube-apiserver.pid"
# cpu_ms: the apiserver's user+system CPU time so far.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($14 + $15) * 1000 / hz }' "/proc/$apiserver/stat"; }
declare -A wall cpu
one() { # name: install Base with that CRD file, then remove it again
	local name=$1 a b ca cb
	ca=$(cpu_ms); a=$(now_ms)
	bin/istioctl install -y --manifests "$work/$name" --set profile=empty --set components.base.enabled=true >/dev/null
	b=$(now_ms); cb=$(cpu_ms)
	wall[$name]+="$((b - a)) "
	cpu[$name]+="$((cb - ca)) "
	bin/istioctl uninstall --purge -y >/dev/null
	until ! bin/kubectl get crd -o name 2>/dev/null | grep -q istio.io; do sleep 0.1; done
}
# A first install warms the apiserver and the binary's page cache; it is not counted.
bin/istioctl install -y --manifests "$work/new" --set profile=empty --set components.base.enabled=true >/dev/null
bin/istioctl uninstall --purge -y >/dev/null
until ! bin/kubectl get crd -o name 2>/dev/null | grep -q istio.io; do sleep 0.1; done
for i in $(seq "$RUNS"); do
	if [ $((i % 2)) = 1 ]; then one old; one new; else one new; one old; fi
done
range() { tr ' ' '\n' | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $RUNS rounds"
printf '%-10s %22s %26s\n' "CRDs" "install wall ms" "apiserver CPU ms"
for name in old new; do
	printf '%-10s %8s (%-11s) %12s (%-11s)\n' "$([ $name = old ] && echo "$BASE" || echo this)" \
		"$(med ${wall[$name]})" "$(echo "${wall[$name]}" | range)" \
		"$(med ${cpu[$name]})" "$(echo "${cpu[$name]}" | range)"
done

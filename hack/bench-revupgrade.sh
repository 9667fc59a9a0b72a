#!/usr/bin/env bash
# The revision upgrade bench (`hack/bench.sh revision-upgrade`, and a section of make bench):
# on a local cluster of its own with the real istiod, RUNS (3) rounds, each from the same
# start (revision a installed by ours, the default tag on it, WORKLOADS (100) Deployments of
# one replica in NAMESPACES (10) namespaces labelled istio.io/rev=a, every pod injected by a):
#  (a) ours: `upgrade --strategy revision --to-revision b --relabel --batch-size W/10
#      --prune-old -y`: 10 batches, each gated on its pods Ready and injected by b
#  (b) upstream's documented canary steps (istio.io docs/setup/upgrade/canary) with upstream
#      istioctl and kubectl: `install --revision b`, per namespace `kubectl label
#      istio.io/rev=b --overwrite`, per namespace `kubectl rollout restart deployment` then
#      `kubectl rollout status deployment`, `tag set default --revision b --overwrite`,
#      `uninstall --revision a`
# alternating which goes first; the cluster is purged and set up again before each.
# Prints the medians, the ratio (b)/(a) and ours' overhead above its batches (its wall time
# less the batches' own, from its batch events). Limit: median (b) / median (a) >= RATIO
# (2.0); exits 1 when missed, unless REPORT_ONLY=1.
#
#   OURS=bin/istioctl UPSTREAM=bin/upstream/istioctl RUNS=3 hack/bench-revupgrade.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-100}
NAMESPACES=${NAMESPACES:-10}
RATIO=${RATIO:-2.0}
REPORT_ONLY=${REPORT_ONLY:-}
OURS=${OURS:-$root/bin/istioctl}
UPSTREAM=${UPSTREAM:-$root/bin/upstream/istioctl}
for b in "$OURS" "$UPSTREAM" bin/kubectl; do
	[ -x "$b" ] || { echo "bench-revupgrade: no binary at $b (make build cluster-bin; hack/bench.sh installs upstream)" >&2; exit 2; }
done
work=$(mktemp -d)
export STATE=$work/cluster HOME=$work/home
mkdir -p "$HOME"
trap 'hack/kube/down.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
hack/kube/up.sh >/dev/null 2>&1
export KUBECONFIG=$STATE/kubeconfig
kc() { bin/kubectl "$@"; }
per=$((WORKLOADS / NAMESPACES))
nss() { for i in $(seq "$NAMESPACES"); do echo "bench-rev-$i"; done; }

setup() {
	"$OURS" install -y --set profile=minimal --revision a >/dev/null
	"$OURS" tag set default --revision a --overwrite >/dev/null
	for ns in $(nss); do
		kc create namespace "$ns" >/dev/null
		kc label namespace "$ns" istio.io/rev=a >/dev/null
		for j in $(seq "$per"); do
			kc create deployment "w$j" -n "$ns" --image=registry.example/app:1 >/dev/null
		done
	done
	for ns in $(nss); do kc rollout status deployment -n "$ns" --timeout=5m >/dev/null; done
}
teardown() {
	# shellcheck disable=SC2046
	kc delete namespace $(nss) --wait=true >/dev/null
	"$OURS" uninstall --purge -y >/dev/null
	kc delete configmap -n istio-system istio-revision-upgrade --ignore-not-found >/dev/null
}
declare -A wall
overhead=""
ours() {
	local a b out batches
	a=$(now_ms)
	out=$("$OURS" upgrade --strategy revision --to-revision b --relabel --batch-size $((WORKLOADS / 10)) --prune-old -y \
		--set profile=minimal -o json)
	b=$(now_ms)
	wall[ours]+="$((b - a)) "
	# The batches' own time, from their events' messages: "..., 1.9s)" or "..., 900ms)".
	batches=$(echo "$out" | grep '"type":"batch"' | sed -E 's/.*, ([0-9.]+)(m?s)\).*/\1 \2/' |
		awk '{ s += ($2 == "ms" ? $1 : $1 * 1000) } END { printf "%d", s }')
	overhead+="$((b - a - batches)) "
}
upstream() {
	local a b ns
	a=$(now_ms)
	"$UPSTREAM" install -y --set profile=minimal --set revision=b >/dev/null
	for ns in $(nss); do kc label namespace "$ns" istio.io/rev=b --overwrite >/dev/null; done
	for ns in $(nss); do
		kc rollout restart deployment -n "$ns" >/dev/null
		kc rollout status deployment -n "$ns" --timeout=5m >/dev/null
	done
	"$UPSTREAM" tag set default --revision b --overwrite >/dev/null
	"$UPSTREAM" uninstall --revision a -y >/dev/null
	b=$(now_ms)
	wall[upstream]+="$((b - a)) "
}
round() { setup; "$1"; teardown; }
for i in $(seq "$RUNS"); do
	if [ $((i % 2)) = 1 ]; then round ours; round upstream; else round upstream; round ours; fi
	echo "round $i: ours ${wall[ours]}; upstream ${wall[upstream]}" >&2
done
o=$(med ${wall[ours]})
u=$(med ${wall[upstream]})
ratio=$(awk -v u="$u" -v o="$o" 'BEGIN { printf "%.2f", u / o }')
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $RUNS rounds; $WORKLOADS Deployments in $NAMESPACES namespaces"
echo
echo "| steps | median wall ms |"
echo "|---|---|"
echo "| ours: upgrade --strategy revision, 10 gated batches, --prune-old | $o |"
echo "| upstream's canary steps (install, relabel, rollout restart + status per namespace, tag, uninstall) | $u |"
echo
echo "upstream / ours: $ratio (limit >= $RATIO); ours' overhead above its batches: median $(med $overhead) ms"
if awk -v r="$ratio" -v l="$RATIO" 'BEGIN { exit !(r < l) }' && [ -z "$REPORT_ONLY" ]; then
	echo "bench-revupgrade: upstream / ours $ratio < $RATIO" >&2
	exit 1
fi

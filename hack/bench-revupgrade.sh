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
# Both sides spend most of their time restarting the workloads, which waits on the bed's
# pods rather than on the tool; what the tool adds is the rest: its overhead above the
# restarts. Upstream's: its wall time less its `kubectl rollout restart` + `rollout status`
# steps, timed per namespace and summed per round. Ours': its wall time less its batches'
# own time, from its batch events. Prints, for each, the medians of the wall time, of the
# restarts (batches) alone and of the overhead. Limit (issue 55): median ours' overhead <=
# SHARE (0.5) x median upstream's overhead; exits 1 when missed, unless REPORT_ONLY=1.
#
#   OURS=bin/istioctl UPSTREAM=bin/upstream/istioctl RUNS=3 hack/bench-revupgrade.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-100}
NAMESPACES=${NAMESPACES:-10}
SHARE=${SHARE:-0.5}
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
declare -A wall alone over # per side: wall time, restarts (batches) alone, overhead; ms lists
ours() {
	local a b out batches
	a=$(now_ms)
	out=$("$OURS" upgrade --strategy revision --to-revision b --relabel --batch-size $((WORKLOADS / 10)) --prune-old -y \
		--set profile=minimal -o json)
	b=$(now_ms)
	# The batches' own time, from their events' messages: "..., 1.9s)" or "..., 900ms)".
	batches=$(echo "$out" | grep '"type":"batch"' | sed -E 's/.*, ([0-9.]+)(m?s)\).*/\1 \2/' |
		awk '{ s += ($2 == "ms" ? $1 : $1 * 1000) } END { printf "%d", s }')
	wall[ours]+="$((b - a)) "
	alone[ours]+="$batches "
	over[ours]+="$((b - a - batches)) "
}
upstream() {
	local a b r ns restarts=0
	a=$(now_ms)
	"$UPSTREAM" install -y --set profile=minimal --set revision=b >/dev/null
	for ns in $(nss); do kc label namespace "$ns" istio.io/rev=b --overwrite >/dev/null; done
	for ns in $(nss); do
		# The restart steps, timed as ours' batches are: what is left is upstream's overhead.
		r=$(now_ms)
		kc rollout restart deployment -n "$ns" >/dev/null
		kc rollout status deployment -n "$ns" --timeout=5m >/dev/null
		restarts=$((restarts + $(now_ms) - r))
	done
	"$UPSTREAM" tag set default --revision b --overwrite >/dev/null
	"$UPSTREAM" uninstall --revision a -y >/dev/null
	b=$(now_ms)
	wall[upstream]+="$((b - a)) "
	alone[upstream]+="$restarts "
	over[upstream]+="$((b - a - restarts)) "
}
round() { setup; "$1"; teardown; }
for i in $(seq "$RUNS"); do
	if [ $((i % 2)) = 1 ]; then round ours; round upstream; else round upstream; round ours; fi
	echo "round $i: ours ${wall[ours]}(overhead ${over[ours]}); upstream ${wall[upstream]}(overhead ${over[upstream]})" >&2
done
oo=$(med ${over[ours]})
ou=$(med ${over[upstream]})
share=$(awk -v o="$oo" -v u="$ou" 'BEGIN { printf "%.2f", o / (u ? u : 1) }')
ok=$(awk -v o="$oo" -v u="$ou" -v s="$SHARE" 'BEGIN { print (o <= s * u) ? 1 : 0 }')
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $RUNS rounds; $WORKLOADS Deployments in $NAMESPACES namespaces"
echo
echo "| steps, median ms | wall | restarts alone | overhead above them |"
echo "|---|---|---|---|"
echo "| ours: upgrade --strategy revision, 10 gated batches, --prune-old | $(med ${wall[ours]}) | $(med ${alone[ours]}) (its batches) | $oo |"
echo "| upstream's canary steps (install, relabel, rollout restart + status per namespace, tag, uninstall) | $(med ${wall[upstream]}) | $(med ${alone[upstream]}) (rollout restart + status) | $ou |"
echo
echo "ours' overhead / upstream's: $share (limit <= $SHARE): $([ "$ok" = 1 ] && echo within || echo MISSED)"
if [ "$ok" != 1 ] && [ -z "$REPORT_ONLY" ]; then
	echo "bench-revupgrade: ours' overhead $oo ms is over $SHARE x upstream's $ou ms" >&2
	exit 1
fi

#!/usr/bin/env bash
# The in-place upgrade of the ambient profile on 4 kwok nodes, ours against upstream's
# `istioctl upgrade`, RUNS (3) rounds on one fresh cluster, alternating which tool goes
# first. Each round per tool: install the ambient profile at one image tag, then the timed
# upgrade to another tag (every pod's template changes), then uninstall --purge. Ours goes
# control plane, then CNI, then ztunnel, the node DaemonSets node by node (docs/upgrade.md);
# upstream applies everything at once and waits. Prints both walls and, for ours, the time
# each gate took (a component's start to its ready, from its -o json events). Reports only:
# no limit (ours does more: it waits for every node's pod in turn).
#
#   OURS=bin/istioctl UPSTREAM=bin/upstream/istioctl RUNS=3 hack/bench-upgrade.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
RUNS=${RUNS:-3}
OURS=${OURS:-$root/bin/istioctl}
UPSTREAM=${UPSTREAM:-$("$root/hack/upstream-istioctl.sh")}
work=$(mktemp -d)
export STATE=$work/cluster HOME=$work/home
mkdir -p "$HOME"
trap 'hack/kube/down.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
NODES=4 hack/kube/up.sh >/dev/null 2>&1
export KUBECONFIG=$STATE/kubeconfig
v=$(hack/istio-version.sh)
SETS=(--set profile=ambient --set hub=docker.io/istio)
# gates FILE: "Pilot=ms Cni=ms Ztunnel=ms batches=n" from an -o json stream: each component's
# component-started to component-ready, by the events' own times.
gates() {
	sed -nE 's/.*"time":"[^"]*T([0-9]+):([0-9]+):([0-9.]+)[^"]*","type":"(component-started|component-ready|node-batch-ready)","component":"([A-Za-z]+)".*/\1 \2 \3 \4 \5/p' "$1" |
		awk '{ t = ($1 * 3600 + $2 * 60 + $3) * 1000 }
			$4 == "component-started" { s[$5] = t }
			$4 == "component-ready" { d[$5] = t - s[$5] }
			$4 == "node-batch-ready" { b++ }
			END { printf "Pilot=%d Cni=%d Ztunnel=%d batches=%d\n", d["Pilot"], d["Cni"], d["Ztunnel"], b }'
}
declare -A wall
pilot="" cni="" zt=""
one() { # name binary
	local name=$1 bin=$2 a b log=$work/$1.log
	"$bin" install -y "${SETS[@]}" --set tag="$v" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	a=$(now_ms)
	if [ "$name" = ours ]; then
		"$bin" upgrade -y -o json "${SETS[@]}" --set tag="$v-bench" >"$work/ours.json" 2>>"$log" || { cat "$log" "$work/ours.json" >&2; exit 1; }
	else
		"$bin" upgrade -y "${SETS[@]}" --set tag="$v-bench" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	fi
	b=$(now_ms)
	wall[$name]+="$((b - a)) "
	if [ "$name" = ours ]; then
		read -r g <<<"$(gates "$work/ours.json")"
		pilot+="$(sed -E 's/.*Pilot=([0-9]+).*/\1/' <<<"$g") "
		cni+="$(sed -E 's/.*Cni=([0-9]+).*/\1/' <<<"$g") "
		zt+="$(sed -E 's/.*Ztunnel=([0-9]+).*/\1/' <<<"$g") "
		batches=$(sed -E 's/.*batches=([0-9]+).*/\1/' <<<"$g")
	fi
	"$bin" uninstall --purge -y >>"$log" 2>&1
	until ! bin/kubectl get crd -o name 2>/dev/null | grep -q istio.io; do sleep 0.1; done
	until [ -z "$(bin/kubectl get pods -n istio-system -o name 2>/dev/null)" ]; do sleep 0.1; done
}
for i in $(seq "$RUNS"); do
	echo "[bench] upgrade round $i/$RUNS" >&2
	if [ $((i % 2)) = 1 ]; then one ours "$OURS"; one upstream "$UPSTREAM"; else one upstream "$UPSTREAM"; one ours "$OURS"; fi
done
echo "in-place upgrade of the ambient profile on 4 nodes (a new image tag), $RUNS rounds, wall ms median (min-max):"
echo "| | wall | control plane gate | CNI gate (node by node) | ztunnel gate (node by node) |"
echo "|---|---|---|---|---|"
echo "| ours (\`upgrade\`, $batches node batches of 1) | $(stats ${wall[ours]}) | $(stats $pilot) | $(stats $cni) | $(stats $zt) |"
echo "| upstream (\`istioctl upgrade\`: everything at once) | $(stats ${wall[upstream]}) | - | - | - |"

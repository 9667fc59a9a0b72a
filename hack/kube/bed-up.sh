#!/usr/bin/env bash
# Starts a test bed of CLUSTERS local control planes (make cluster-up CLUSTERS=N), after
# stopping whatever bed already runs with the same STATE, so a second start replaces the first.
#
# CLUSTERS=1 (the default) is up.sh in $STATE, as ever: context istioctl-local.
# CLUSTERS=N (2 to 8) starts N up.sh at once, cluster i with BED_INDEX=i in $STATE/cluster-i
# (context cluster-i, service range 127.(63+i).0.0/16, fakelb giving LoadBalancer Services
# addresses from its own slice of 192.0.2.0/24), and writes one kubeconfig with every context
# ($STATE/kubeconfig, current context cluster-1) and $STATE/env. Stop it with bed-down.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}
STATE=${STATE:-$root/.cluster}
CLUSTERS=${CLUSTERS:-1}

log() { printf '[cluster-up] %s\n' "$*" >&2; }
[[ $CLUSTERS =~ ^[1-8]$ ]] || { log "ERROR: CLUSTERS=$CLUSTERS: a bed has 1 to 8 clusters"; exit 1; }

if [ -d "$STATE" ]; then
	log "replacing the clusters running with state $STATE"
	STATE=$STATE "$here/bed-down.sh"
fi
if [ "$CLUSTERS" = 1 ]; then
	export STATE
	exec "$here/up.sh"
fi

mkdir -p "$STATE"
STATE=$(cd "$STATE" && pwd)
started=$SECONDS
pids=()
for i in $(seq 1 "$CLUSTERS"); do
	STATE=$STATE/cluster-$i BED_INDEX=$i "$here/up.sh" >"$STATE/up-cluster-$i.log" 2>&1 &
	pids+=($!)
done
failed=()
for i in $(seq 1 "$CLUSTERS"); do
	wait "${pids[$((i - 1))]}" || failed+=("$i")
done
if [ ${#failed[@]} -gt 0 ]; then
	for i in "${failed[@]}"; do
		log "ERROR: cluster-$i did not start:"
		sed 's/^/    /' "$STATE/up-cluster-$i.log" >&2
	done
	STATE=$STATE "$here/bed-down.sh" || true
	exit 1
fi

configs=$(for i in $(seq 1 "$CLUSTERS"); do printf '%s:' "$STATE/cluster-$i/kubeconfig"; done)
# kubectl merges the files in order: cluster-1 comes first, so it is the current context.
KUBECONFIG=${configs%:} "$BIN/kubectl" config view --flatten >"$STATE/kubeconfig"
chmod 600 "$STATE/kubeconfig"
mkdir -p "$STATE/kubecache"
cat >"$STATE/env" <<ENV
export KUBECONFIG=$STATE/kubeconfig
export KUBECACHEDIR=$STATE/kubecache
ENV
for i in $(seq 1 "$CLUSTERS"); do tail -n 3 "$STATE/up-cluster-$i.log" | grep '^\[cluster-up\] cluster ' >&2; done
log "$CLUSTERS clusters up in $((SECONDS - started))s; contexts cluster-1 to cluster-$CLUSTERS in $STATE/kubeconfig"
cat "$STATE/env"

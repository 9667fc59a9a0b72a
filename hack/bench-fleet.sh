#!/usr/bin/env bash
# The fleet bench (`hack/bench.sh fleet`, and a section of make bench): on a 3-cluster bed
# of its own (hack/kube/bed-up.sh CLUSTERS=3, a real istiod for every istiod pod as in the
# rest of the bench), FLEET_RUNS (5) rounds, each step on the empty bed and purged after:
#  (a) ours: `x fleet install -f FLEET_FILE -y`
#  (b) upstream's documented steps in sequence with upstream istioctl: per cluster, in the
#      file's order, its namespace with the labels and annotations the dump lists (kubectl
#      create namespace, label, annotate), then `istioctl install -y -f` of its dumped
#      IstioOperator; then `create-remote-secret --context FROM --name FROM | kubectl
#      --context INTO apply -f -` for every link of the dump
#  (c) the same single-cluster installs as the fleet runs them, without the fleet: every
#      other primary installing beside the critical path's primary, then the remote; until
#      all are done. The three apiservers of the bed share the installer's CPUs, so the
#      installs beside each other slow each other down as they do inside the fleet: this is
#      what the fleet's own cost (plan, links, scheduling, one start-up) is measured against.
#  (d) the critical path with our single-cluster install, each alone on the bed: the
#      primary's IstioOperator, then the remote's. Shown, not a limit (issue 25's first
#      line, which measured the bed's shared CPUs rather than the fleet).
# (a) and (c) alternate which goes first from round to round, as (b) and (d) do.
# Limit: median (a) <= median (c) + FLEET_SLACK_MS (1000). The ratio median (b) / median (a)
# is shown, not a limit (issue 55): the bed's three clusters share 2 CPUs, so upstream's
# sequence, one cluster at a time, gets them all while the fleet's installs split them.
# Prints markdown; exits 1 when the limit is missed, unless REPORT_ONLY=1.
#
#   OURS=bin/istioctl UPSTREAM=bin/upstream/istioctl FLEET_RUNS=5 hack/bench-fleet.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
REPORT_ONLY=${REPORT_ONLY:-}
FLEET_RUNS=${FLEET_RUNS:-5}
[ "$FLEET_RUNS" -ge 5 ] || [ -n "$REPORT_ONLY" ] || { echo "bench-fleet: FLEET_RUNS=$FLEET_RUNS: the limit reads the median of at least 5 rounds (REPORT_ONLY=1 to only report)" >&2; exit 2; }
FLEET_FILE=${FLEET_FILE:-docs/examples/fleet-3-clusters.yaml}
FLEET_SLACK_MS=${FLEET_SLACK_MS:-1000}
OURS=${OURS:-$root/bin/istioctl}
UPSTREAM=${UPSTREAM:-$root/bin/upstream/istioctl}
for b in "$OURS" "$UPSTREAM" bin/kubectl; do
	[ -x "$b" ] || { echo "bench-fleet: no binary at $b (make build cluster-bin; hack/bench.sh installs upstream)" >&2; exit 2; }
done
work=$(mktemp -d)
bed=$work/bed
trap 'STATE=$bed hack/kube/bed-down.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$work/benchcmp" ./hack/benchcmp
go build -o "$work/fleetsplit" ./hack/fleetsplit
log_tag=bench-fleet

load0=$(cut -d' ' -f1-3 /proc/loadavg)
log "starting a bed of 3 clusters"
STATE=$bed CLUSTERS=3 hack/kube/bed-up.sh >"$work/bed-up.log" 2>&1 || { cat "$work/bed-up.log" >&2; exit 1; }
export KUBECONFIG=$bed/kubeconfig KUBECACHEDIR=$bed/kubecache HOME=$work/home
mkdir -p "$HOME"
kc() { bin/kubectl --cache-dir "$KUBECACHEDIR" "$@"; }

# What each cluster gets and the links, from our dump of the file (it contacts no cluster).
"$OURS" x fleet dump -f "$FLEET_FILE" -o json >"$work/dump.json"
split=$work/split
mkdir -p "$split"
stripped=$("$work/fleetsplit" "$split" <"$work/dump.json" 2>&1)
mapfile -t clusters <"$split/clusters" # name context role primary
mapfile -t links <"$split/links"       # fromContext fromName intoContext
ctx_of() { local c n x; for c in "${clusters[@]}"; do read -r n x _ _ <<<"$c"; if [ "$n" = "$1" ]; then echo "$x"; fi; done; }
# The critical path: the first remote and its primary (the other primaries install beside).
crit_remote="" crit_primary=""
for c in "${clusters[@]}"; do
	read -r n _ role primary <<<"$c"
	if [ "$role" != primary ] && [ -z "$crit_remote" ]; then crit_remote=$n crit_primary=$primary; fi
done
[ -n "$crit_remote" ] || { echo "bench-fleet: $FLEET_FILE has no remote: no critical path to measure" >&2; exit 2; }

step() { # LOG CMD...: runs a step of a timed sequence; the bench stops when it fails
	local l=$1
	shift
	echo "== $*" >>"$l"
	"$@" >>"$l" 2>&1 || { log "$* failed (log: $l)"; cat "$l" >&2; exit 1; }
}
# purge leaves the bed as it started: what pkg/cmd's purgeBed removes, and the namespaces.
purge() {
	local c n x ns
	for c in "${clusters[@]}"; do
		read -r n x _ _ <<<"$c"
		ns=$(head -n 1 "$split/$n.ns")
		"$OURS" --context "$x" uninstall --purge -y >>"$work/purge.log" 2>&1 || true
		kc --context "$x" delete secret -n "$ns" -l istio/multiCluster=true --ignore-not-found >>"$work/purge.log" 2>&1
		kc --context "$x" delete secret -n "$ns" --field-selector type=kubernetes.io/service-account-token --ignore-not-found >>"$work/purge.log" 2>&1
		kc --context "$x" delete serviceaccount -n "$ns" istio-reader-service-account --ignore-not-found >>"$work/purge.log" 2>&1
		kc --context "$x" delete clusterrole,clusterrolebinding "istio-reader-clusterrole-$ns" --ignore-not-found >>"$work/purge.log" 2>&1
		kc --context "$x" delete namespace "$ns" --ignore-not-found --wait >>"$work/purge.log" 2>&1
	done
	for c in "${clusters[@]}"; do # an empty bed: no Istio CRD or webhook left anywhere
		read -r _ x _ _ <<<"$c"
		local left
		left=$(kc --context "$x" get crd,mutatingwebhookconfiguration,validatingwebhookconfiguration -o name 2>&1 | grep -i istio || true)
		[ -z "$left" ] || { log "the purge left in $x: $left"; exit 1; }
	done
}

declare -a t_ours t_up t_crit t_primary t_remote t_beside
ours_round() {
	local l=$work/ours-$1.log a b
	a=$(now_ms)
	step "$l" "$OURS" x fleet install -f "$FLEET_FILE" -y
	b=$(now_ms)
	t_ours+=($((b - a)))
	purge
}
upstream_round() {
	local l=$work/upstream-$1.log a b c n x ns verb kv from name into
	a=$(now_ms)
	for c in "${clusters[@]}"; do
		read -r n x _ _ <<<"$c"
		ns=$(head -n 1 "$split/$n.ns")
		step "$l" kc --context "$x" create namespace "$ns"
		while read -r verb kv; do
			step "$l" kc --context "$x" "$verb" namespace "$ns" "$kv"
		done < <(tail -n +2 "$split/$n.ns")
		step "$l" "$UPSTREAM" --context "$x" install -y -f "$split/$n.upstream.json"
	done
	for c in "${links[@]}"; do
		read -r from name into <<<"$c"
		echo "== create-remote-secret --context $from --name $name | kubectl --context $into apply -f -" >>"$l"
		{ "$UPSTREAM" --context "$from" create-remote-secret --name "$name" | kc --context "$into" apply -f -; } >>"$l" 2>&1 ||
			{ log "upstream link $from -> $into failed (log: $l)"; cat "$l" >&2; exit 1; }
	done
	b=$(now_ms)
	t_up+=($((b - a)))
	purge
}
crit_round() {
	local l=$work/crit-$1.log a b c
	a=$(now_ms)
	step "$l" "$OURS" --context "$(ctx_of "$crit_primary")" install -y -f "$split/$crit_primary.iop.json"
	b=$(now_ms)
	step "$l" "$OURS" --context "$(ctx_of "$crit_remote")" install -y -f "$split/$crit_remote.iop.json"
	c=$(now_ms)
	t_primary+=($((b - a))) t_remote+=($((c - b))) t_crit+=($((c - a)))
	purge
}
beside_round() {
	local l=$work/beside-$1.log a b c n x role pids=()
	a=$(now_ms)
	for c in "${clusters[@]}"; do
		read -r n x role _ <<<"$c"
		if [ "$role" = primary ] && [ "$n" != "$crit_primary" ]; then
			step "$l.$n" "$OURS" --context "$x" install -y -f "$split/$n.iop.json" &
			pids+=($!)
		fi
	done
	step "$l" "$OURS" --context "$(ctx_of "$crit_primary")" install -y -f "$split/$crit_primary.iop.json"
	step "$l" "$OURS" --context "$(ctx_of "$crit_remote")" install -y -f "$split/$crit_remote.iop.json"
	for p in "${pids[@]}"; do wait "$p" || { log "an install beside the critical path failed"; exit 1; }; done
	b=$(now_ms)
	t_beside+=($((b - a)))
	purge
}
purge # a bed that has never had Istio still passes through the same purge once
for i in $(seq 1 "$FLEET_RUNS"); do
	log "round $i/$FLEET_RUNS"
	if [ $((i % 2)) = 1 ]; then
		ours_round "$i"
		beside_round "$i"
		upstream_round "$i"
		crit_round "$i"
	else
		beside_round "$i"
		ours_round "$i"
		crit_round "$i"
		upstream_round "$i"
	fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# Start-up of both binaries (version --remote=false), beside the figures: the upstream
# sequence starts one istioctl per install and per link, ours one process.
startup=$(KUBECONFIG=/nonexistent "$work/benchcmp" -n 10 ours "$OURS" version --remote=false ::: upstream "$UPSTREAM" version --remote=false | grep -v ' / \| - ')
su_ours=$(awk '$1 == "ours" { print $3 }' <<<"$startup")
su_up=$(awk '$1 == "upstream" { print $3 }' <<<"$startup")
n_up=$((${#clusters[@]} + ${#links[@]}))

mo=$(med "${t_ours[@]}") mu=$(med "${t_up[@]}") mc=$(med "${t_crit[@]}") mb=$(med "${t_beside[@]}")
ratio=$(awk -v a="$mu" -v b="$mo" 'BEGIN { printf "%.1f", a / (b ? b : 1) }')
ok_beside=$([ "$mo" -le $((mb + FLEET_SLACK_MS)) ] && echo 1 || echo 0)
gw="the file gives each remote its remotePilotAddress and has one network, so upstream's guide has no east-west gateway and no expose-istiod step here"
{
	echo "$FLEET_RUNS rounds on one bed of 3 clusters (\`$FLEET_FILE\`), each step on the empty bed and purged"
	echo "after. Load average $load0 at the start, $load1 at the end, on $(nproc) CPUs."
	echo
	echo "- ours: \`istioctl x fleet install -f $FLEET_FILE -y\`, one process."
	echo "- upstream's documented steps in sequence ($n_up upstream istioctl processes): per cluster, \`kubectl"
	echo "  create namespace\`, \`label\` and \`annotate\` it as the dump lists, then \`istioctl install -y -f\` of"
	echo "  the IstioOperator our \`x fleet dump\` gives it; then, for each of the ${#links[@]} links,"
	echo "  \`istioctl create-remote-secret --context FROM --name FROM | kubectl --context INTO apply -f -\`;"
	echo "  $gw."
	[ -z "$stripped" ] || echo "  Upstream rejects our IstioOperator's \`spec.external\` (\`unknown field\`): it is stripped and the namespace annotated by kubectl instead, as upstream's guide does ($(grep -o 'cluster-[^:]*' <<<"$stripped" | paste -sd, -))."
	echo "- the same installs as the fleet runs them: our single-cluster \`install -y -f\` of each dumped"
	echo "  IstioOperator, the other primary beside $crit_primary, then $crit_remote (a remote waits for its"
	echo "  primary); no links. The bed's three apiservers share the installer's $(nproc) CPUs, so installs"
	echo "  beside each other slow each other down, inside the fleet as here: the limit reads the fleet's"
	echo "  own cost against these."
	echo "- the critical path alone: $crit_primary's install alone on the bed, then $crit_remote's (shown, not a limit)."
	echo
	echo "| wall ms, median (min-max) | |"
	echo "|---|---|"
	echo "| ours: fleet install | $(stats "${t_ours[@]}") |"
	echo "| upstream's steps in sequence | $(stats "${t_up[@]}") |"
	echo "| the same installs as the fleet runs them (the other primary beside), no links | $(stats "${t_beside[@]}") |"
	echo "| our install of $crit_primary alone | $(stats "${t_primary[@]}") |"
	echo "| our install of $crit_remote alone, after it | $(stats "${t_remote[@]}") |"
	echo "| critical path alone: the two summed, per round | $(stats "${t_crit[@]}") |"
	echo
	echo "upstream's steps / ours: ${ratio}x (shown, not a limit: the bed's three clusters share $(nproc) CPUs)"
	echo "ours - the same installs run beside each other: $((mo - mb)) ms (limit <= +$FLEET_SLACK_MS ms): $([ "$ok_beside" = 1 ] && echo within || echo MISSED)"
	echo "ours - the critical path alone: $((mo - mc)) ms (what the bed's shared CPUs add besides; not a limit)"
	echo "start-up (version --remote=false, median of 10): ours $su_ours, upstream $su_up; the upstream sequence starts $n_up of them"
	echo
	echo "Ours, the last round's summary:"
	echo
	echo '```'
	sed -n '/^CLUSTER/,$p' "$work/ours-$FLEET_RUNS.log"
	echo '```'
	echo
	echo '```'
	echo "$startup"
	echo '```'
} 
if [ "$ok_beside" != 1 ]; then
	[ -n "$REPORT_ONLY" ] || { log "the fleet limit was missed (REPORT_ONLY=1 to only report)"; exit 1; }
fi

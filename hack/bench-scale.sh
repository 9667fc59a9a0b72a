#!/usr/bin/env bash
# make bench-scale: how our commands grow with the size of the install and of the cluster,
# against upstream istioctl master where it has the command. On its own local cluster
# (hack/kube/up.sh, state in a temp dir, stopped on exit):
#  a. install of profile=minimal plus 1, 10 and 50 ingress gateways (ingress-1..N), ours and
#     upstream alternating, each run into a cluster emptied by uninstall --purge;
#  b. with a default install in place, grown to 200 namespaces / 1,000 pods, then 1,000 /
#     5,000, then 2,000 / 10,000 (hack/scalefill: pods bound to kwok nodes, all Running):
#     our verify-install, our x precheck and upstream's x precheck, alternating.
# Wall time, CPU time and max RSS come from hack/benchcmp (rusage of each run; medians).
# Writes docs/benchmarks-scale.md (OUT=... elsewhere), keeping the hand-written notes below
# its "notes" marker. About 12 minutes on 2 CPUs.
#
# Knobs: RUNS (5: runs per command at each cluster size), INSTALL_RUNS (3), GATEWAYS
# ("1 10 50"), SIZES ("200:1000 1000:5000 2000:10000", namespaces:pods; keep the pods per
# namespace constant), PROFILE=DIR (also write pprof profiles of ours at the largest sizes:
# render, install, verify-install, precheck), OURS (another build of ours, e.g. an older
# commit's, instead of building bin/istioctl), OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
RUNS=${RUNS:-5}
INSTALL_RUNS=${INSTALL_RUNS:-3}
GATEWAYS=${GATEWAYS:-"1 10 50"}
SIZES=${SIZES:-"200:1000 1000:5000 2000:10000"}
PROFILE=${PROFILE:-}
OUT=${OUT:-$root/docs/benchmarks-scale.md}
. "$root/hack/upstream.env"
UPSTREAM_FLAGS=(--set hub=docker.io/istio --set tag="$("$root/hack/istio-version.sh")")
started=$SECONDS
log() { printf '[bench-scale %3ds] %s\n' $((SECONDS - started)) "$*" >&2; }

UPSTREAM=$("$root/hack/upstream-istioctl.sh")
if [ -n "${OURS:-}" ]; then
	make -s cluster-bin >/dev/null
else
	make -s build cluster-bin >/dev/null
	OURS=$root/bin/istioctl
fi
go build -o bin/benchcmp ./hack/benchcmp
go build -o bin/scalefill ./hack/scalefill
KUBECTL=$root/bin/kubectl
[ -z "$PROFILE" ] || { mkdir -p "$PROFILE"; PROFILE=$(cd "$PROFILE" && pwd); }

work=$(mktemp -d)
export HOME=$work/home STATE=$work/cluster
mkdir -p "$HOME"
trap 'hack/kube/down.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
results=$work/results.tsv # series, size label, size, unit, wall ms, wall range, CPU ms, RSS MiB, RSS range
: >"$results"

# record SERIES... < benchcmp output: one results line per subject, in subject order.
record() { # size-label size unit series...
	local label=$1 size=$2 unit=$3
	shift 3
	awk -v label="$label" -v size="$size" -v unit="$unit" -v names="$(printf '%s\n' "$@")" '
		BEGIN { n = split(names, series, "\n") }
		/^command / { on = 1; next }
		on && NF >= 8 && $2 ~ /^[0-9]+$/ {
			i++; wall = $3; sub(/ms$/, "", wall); cpu = $5; sub(/ms$/, "", cpu)
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", series[i], label, size, unit, wall, $4, cpu, $7, $9
		}' >>"$results"
}

log "starting a local cluster"
hack/kube/up.sh >/dev/null 2>"$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
export KUBECONFIG=$STATE/kubeconfig

# Empty the cluster of Istio between installs: our purge removes what either tool applied
# (both apply as field manager istio-operator) and waits for it; pods go in the background.
cat >"$work/clean.sh" <<CLEAN
out=\$("$OURS" uninstall --purge -y 2>&1) || { echo "\$out" >&2; exit 1; }
for i in \$(seq 1 240); do
	pods=\$("$KUBECTL" get pods -n istio-system -o name 2>/dev/null) && [ -z "\$pods" ] && exit 0
	sleep 0.5
done
echo "pods of istio-system still there after 2 minutes" >&2; exit 1
CLEAN

# --- a. install with N ingress gateways ---------------------------------------------------
gateways_spec() { # N: profile minimal plus ingress-1..N
	printf 'apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: minimal\n  components:\n    ingressGateways:\n'
	for i in $(seq 1 "$1"); do printf '    - name: ingress-%d\n      enabled: true\n' "$i"; done
}
for n in $GATEWAYS; do
	spec=$work/gateways-$n.yaml
	gateways_spec "$n" >"$spec"
	objects=$("$OURS" manifest generate -f "$spec" | grep -c '^kind:')
	log "install with $n ingress gateway(s) ($objects objects), $INSTALL_RUNS runs each"
	# -v: every run and every emptying of the cluster as it ends, on stderr.
	bin/benchcmp -v -n "$INSTALL_RUNS" -warmup 1 -setup "bash $work/clean.sh" \
		ours "$OURS" install -y -f "$spec" \
		::: upstream "$UPSTREAM" install -y -f "$spec" "${UPSTREAM_FLAGS[@]}" \
		| tee "$work/install-$n.txt" >&2
	record "$n gateway(s), $objects objects" "$n" gateway "install (ours)" "install (upstream)" <"$work/install-$n.txt"
done
last_gw=${GATEWAYS##* }
if [ -n "$PROFILE" ]; then
	log "profiles: render and install with $last_gw gateways"
	"$OURS" manifest generate -f "$work/gateways-$last_gw.yaml" --cpuprofile "$PROFILE/render-$last_gw.cpu" --memprofile "$PROFILE/render-$last_gw.mem" >/dev/null
	bash "$work/clean.sh"
	"$OURS" install -y -f "$work/gateways-$last_gw.yaml" --cpuprofile "$PROFILE/install-$last_gw.cpu" --memprofile "$PROFILE/install-$last_gw.mem" >/dev/null
fi
bash "$work/clean.sh"

# --- b. verify-install and precheck on a growing cluster ----------------------------------
log "default install for verify-install"
"$OURS" install -y >/dev/null
fills=""
for size in $SIZES; do
	ns=${size%%:*} pods=${size##*:}
	log "growing the cluster to $ns namespaces and $pods pods"
	t0=$SECONDS
	bin/scalefill -namespaces "$ns" -pods "$pods"
	fills+="$ns namespaces / $pods pods: $((SECONDS - t0)) s; "
	log "verify-install and precheck at $pods pods, $RUNS runs each"
	bin/benchcmp -n "$RUNS" \
		verify-install "$OURS" verify-install \
		::: precheck "$OURS" x precheck \
		::: upstream-precheck "$UPSTREAM" x precheck \
		| tee "$work/checks-$pods.txt" >&2
	record "$ns namespaces, $pods pods" "$pods" "1,000 pods" "verify-install (ours)" "x precheck (ours)" "x precheck (upstream)" <"$work/checks-$pods.txt"
done
if [ -n "$PROFILE" ]; then
	log "profiles: verify-install and precheck at $pods pods"
	"$OURS" verify-install --cpuprofile "$PROFILE/verify-install-$pods.cpu" --memprofile "$PROFILE/verify-install-$pods.mem" >/dev/null
	"$OURS" x precheck --cpuprofile "$PROFILE/precheck-$pods.cpu" --memprofile "$PROFILE/precheck-$pods.mem" >/dev/null
fi
elapsed=$((SECONDS - started))

# --- report -------------------------------------------------------------------------------
machine="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go version | cut -d' ' -f3)"
{
	cat <<HEAD
# Scale benchmarks

Generated by \`make bench-scale\` (hack/bench-scale.sh) on $(date -u +%Y-%m-%d) in $((elapsed / 60)) min $((elapsed % 60)) s.
Machine: $machine; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: read the ratios).
Ours: this repository's \`bin/istioctl\`. Upstream: istioctl master \`$UPSTREAM_VERSION\` (it has no verify-install).
Wall time, CPU time (user + system) and max RSS are medians over alternating runs (hack/benchcmp):
$INSTALL_RUNS per install and $RUNS per check, each after one warm-up run. "÷ smallest" divides by the same series at the smallest size;
growth is at most linear when the value per unit of size does not rise with the size, nor the cost of each
added unit from one step of sizes to the next (hack/bench-scale-report.awk says exactly how).

## a. install: profile minimal plus N ingress gateways

Each run installs into a cluster emptied first (\`uninstall --purge\`, then every istio-system pod gone),
and waits until everything is ready (kwok makes pods Ready at once, so this is the installer's and the
control plane's work, not image pulls).

HEAD
	awk -F'\t' -f "$root/hack/bench-scale-report.awk" "$results"
	echo "Filling the cluster took: ${fills%; }."
	# Hand-written notes (profiles, before/after) below the marker survive a re-run.
	if [ -f "$OUT" ] && grep -q '^<!-- notes: kept by bench-scale.sh -->' "$OUT"; then
		echo
		sed -n '/^<!-- notes: kept by bench-scale.sh -->/,$p' "$OUT"
	fi
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "done in ${elapsed}s; wrote ${OUT#$root/}"
cat "$OUT"

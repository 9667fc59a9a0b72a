#!/usr/bin/env bash
# make bench: ours against upstream istioctl master, alternating, in one run on this machine.
#  - manifest generate (default, demo, ambient): wall, CPU, max RSS (hack/benchcmp)
#  - install of the default profile into a fresh local cluster, and re-install of the same
#    spec: wall time, and the apiserver's request counts during the run (all, and writes)
#  - uninstall
#  - install -y of this tree against the base commit's (BASE, main), each on a fresh cluster,
#    by the same steps, which goes first alternating (install_pair): a limit of
#    +INSTALL_BUDGET_PCT (5) % on both the median and the fastest round (install_vs_base_limit;
#    `hack/bench.sh install` runs only that, RUNS rounds, ~20 s a round, with both binaries'
#    start-up beside it, and exits 1 when the limit is missed; no upstream).
#  - start-up (version --remote=false, manifest generate) against a base commit (BASE, main)
# Writes docs/benchmarks.md. Needs the cluster binaries (make cluster-bin) and installs
# upstream istioctl into bin/upstream once (hack/bench-spec.sh does it too).
#  - the cluster lock's own cost: requests and time to take, renew and release it
#    (`hack/bench.sh lock` prints only that, on a cluster of its own, in ~30 s)
#  - x fleet install of docs/examples/fleet-3-clusters.yaml against upstream's documented
#    steps in sequence, on a 3-cluster bed of its own (hack/bench-fleet.sh; `hack/bench.sh
#    fleet` prints only that, 5 rounds in ~10 minutes, and exits 1 when its limit is missed)
#  - upgrade --strategy revision of 100 workloads in 10 gated batches against upstream's
#    canary steps, each side's overhead above its restarts (hack/bench-revupgrade.sh;
#    `hack/bench.sh revision-upgrade` prints only that, and exits 1 when its limit is missed)
#  - x precheck on a clean cluster, this tree against BASE and upstream, with the apiserver
#    requests of one run, dry runs apart (`hack/bench.sh precheck` prints only that)
#  - the in-place upgrade of the ambient profile on 4 nodes (control plane, then CNI, then
#    ztunnel node by node) against upstream's `istioctl upgrade`, with the time of each gate
#    (hack/bench-upgrade.sh; `hack/bench.sh upgrade` prints only that; no limit)
#  - `hack/bench.sh uninstall` prints only the uninstall --purge -y rows, ours against
#    upstream, RUNS (5) alternating rounds on fresh clusters, and exits 1 when our median is
#    over upstream's
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"

lock_cost() { # prints TestLockCost's figures, on a fresh cluster in $1, and a FAILED line when it failed
	local state=$1 log rc=0
	STATE=$state hack/kube/up.sh >/dev/null 2>&1
	log=$(ISTIOCTL_TEST_KUBECONFIG=$state/kubeconfig go test -count=1 -run '^TestLockCost$' -v ./operator/lock 2>&1) || rc=$?
	STATE=$state hack/kube/down.sh >/dev/null 2>&1
	grep -o 'lock cost.*' <<<"$log" || true
	if [ "$rc" != 0 ]; then echo "lock cost: TestLockCost FAILED"; fi
}
least() { printf '%s\n' "$@" | sort -n | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.1fx", a / b }'; }
# limit NAME OK MESSAGE: records a limit the run missed; the run exits non-zero at its end.
missed=()
limit() { if [ "$2" != 1 ]; then missed+=("$1: $3"); fi; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }

RUNS=${RUNS:-5}
BASE=${BASE:-main}
INSTALL_BUDGET_PCT=${INSTALL_BUDGET_PCT:-5}
ISTIO_VERSION=$("$root/hack/istio-version.sh") # the version line: our images, and upstream's (its master has no release tag)
SETS=(--set profile=default --set hub=docker.io/istio --set tag="$ISTIO_VERSION")
declare -A t_install
# build_base DIR: the base commit's binary, DIR/base.bin, built as make build builds ours.
build_base() {
	git worktree add --detach "$1/base" "$(git rev-parse --verify "$BASE^{commit}")" >/dev/null 2>&1
	# By its own make build: with its version stamped as ours is (an unstamped binary installs
	# with another version in its labels and records, and measured ~10 % faster).
	(cd "$1/base" && make -s build >/dev/null && cp bin/istioctl "$1/base.bin")
}
# run_install NAME BINARY ROUND: install -y of SETS into one fresh cluster ($STATE), its wall
# time added to t_install[NAME].
run_install() {
	local name=$1 bin=$2 i=$3 log=$work/$1-install-$3.log a b
	hack/kube/up.sh >/dev/null 2>&1
	export KUBECONFIG=$STATE/kubeconfig
	a=$(now_ms)
	"$bin" install -y "${SETS[@]}" >>"$log" 2>&1 || { echo "[bench] $name round $i: install failed (log: $log)" >&2; cat "$log" >&2; exit 1; }
	b=$(now_ms)
	t_install[$name]+="$((b - a)) "
	unset KUBECONFIG
	hack/kube/down.sh >/dev/null 2>&1
}
# install_pair BINARY ROUND: this tree's install -y (t_install[this]) and BASE's
# (t_install[base]) on fresh clusters, which goes first alternating, so a trend in the
# machine's load hits both alike. The same steps for both: the install rows of run_tool
# are not compared with BASE's, since run_tool scrapes the apiserver's metrics right
# before and after (several MB for it to write, on the CPUs the install runs on).
install_pair() {
	# Fresh copies of both (a binary the linker just wrote starts ~1.5 ms slower and maps
	# ~2 MiB more than a copy of the same bytes).
	[ -x "$work/this.bin" ] || cp "$1" "$work/this.bin"
	if [ $(($2 % 2)) = 1 ]; then
		run_install this "$work/this.bin" "$2"
		run_install base "$work/base.bin" "$2"
	else
		run_install base "$work/base.bin" "$2"
		run_install this "$work/this.bin" "$2"
	fi
}
# install_vs_base prints this tree's install -y (t_install[this]) against BASE's;
# install_vs_base_limit records its limit.
install_vs_base() {
	echo "### install -y against $BASE ($(git rev-parse --short "$BASE")), same rounds, same steps, alternating"
	echo
	echo "| wall ms, median (min-max) | this tree | $BASE | difference of medians | of minimums |"
	echo "|---|---|---|---|---|"
	echo "| install into a fresh cluster | $(stats ${t_install[this]}) | $(stats ${t_install[base]}) | $(pct "$(med ${t_install[this]})" "$(med ${t_install[base]})") | $(pct "$(least ${t_install[this]})" "$(least ${t_install[base]})") |"
	echo
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f %%", (a - b) * 100 / (b ? b : 1) }'; }
# Missed when both the median and the fastest round are over BASE's by more than the
# budget: each alone moved by ~10 % between two builds of one commit at 5 rounds (one up
# while the other held), and a change that costs an install time moves both.
install_vs_base_limit() {
	local within_med within_min
	within_med=$(le "$(med ${t_install[this]})" "$(plus_budget "$(med ${t_install[base]})")")
	within_min=$(le "$(least ${t_install[this]})" "$(plus_budget "$(least ${t_install[base]})")")
	limit "install -y against $BASE" "$([ "$within_med" = 1 ] || [ "$within_min" = 1 ] && echo 1 || echo 0)" \
		"our median $(med ${t_install[this]}) ms and fastest round $(least ${t_install[this]}) ms are over $BASE's $(med ${t_install[base]}) / $(least ${t_install[base]}) ms + $INSTALL_BUDGET_PCT %"
}
plus_budget() { awk -v b="$1" -v p="$INSTALL_BUDGET_PCT" 'BEGIN { print b * (100 + p) / 100 }'; }
exit_on_missed() {
	if [ ${#missed[@]} -gt 0 ]; then
		printf '[bench] limit missed: %s\n' "${missed[@]}" >&2
		exit 1
	fi
}

if [ "${1:-}" = install ]; then
	make -s build cluster-bin >/dev/null
	go build -o bin/benchcmp ./hack/benchcmp
	work=$(mktemp -d)
	export HOME=$work/home STATE=$work/cluster
	mkdir -p "$HOME"
	trap 'STATE=$work/cluster hack/kube/down.sh >/dev/null 2>&1 || true; git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
	build_base "$work"
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
	for i in $(seq 1 "$RUNS"); do
		echo "[bench] install round $i/$RUNS" >&2
		install_pair bin/istioctl "$i"
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	install_vs_base
	echo "start-up of both binaries (version --remote=false), to compare machines:"
	echo
	echo '```'
	KUBECONFIG=/nonexistent bin/benchcmp -n 10 "this tree" bin/istioctl version --remote=false ::: "$BASE" "$work/base.bin" version --remote=false
	echo '```'
	install_vs_base_limit
	exit_on_missed
	exit 0
fi

if [ "${1:-}" = lock ]; then
	make -s cluster-bin >/dev/null 2>&1
	tmp=$(mktemp -d)
	trap 'STATE=$tmp/cluster hack/kube/down.sh >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	lock_cost "$tmp/cluster"
	exit 0
fi

RENDER_RUNS=${RENDER_RUNS:-10}
. "$root/hack/upstream.env"
UPSTREAM=$("$root/hack/upstream-istioctl.sh")
make -s build cluster-bin >/dev/null
if [ "${1:-}" = fleet ]; then
	OURS=$root/bin/istioctl UPSTREAM=$UPSTREAM exec hack/bench-fleet.sh
fi
if [ "${1:-}" = revision-upgrade ]; then
	OURS=$root/bin/istioctl UPSTREAM=$UPSTREAM exec hack/bench-revupgrade.sh
fi
if [ "${1:-}" = upgrade ]; then
	OURS=$root/bin/istioctl UPSTREAM=$UPSTREAM exec hack/bench-upgrade.sh
fi
go build -o bin/benchcmp ./hack/benchcmp
OURS=$root/bin/istioctl
work=$(mktemp -d)
export HOME=$work/home
mkdir -p "$HOME"
out=$work/report.md
trap 'STATE=$work/cluster hack/kube/down.sh >/dev/null 2>&1 || true; STATE=$work/precheck-cluster hack/kube/down.sh >/dev/null 2>&1 || true; git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# --- install into a fresh cluster ------------------------------------------------------
metrics() { # prints "<all requests> <write requests> <dry runs>" from the apiserver's counters
	KUBECONFIG=$STATE/kubeconfig bin/kubectl get --raw /metrics 2>/dev/null | awk '
		/^apiserver_request_total\{/ {
			n = $NF; all += n
			# Dry runs (the plan of an install proves admission with them) write nothing: apart.
			if ($0 ~ /dry_run="All"/) dry += n
			# Writes to objects: not what controllers and kwok write on their own and an
			# install never does (leases, events, pods, ReplicaSets, endpoints, status),
			# and access reviews (questions; nothing stored).
			else if ($0 ~ /verb="(POST|PUT|PATCH|DELETE|DELETECOLLECTION|APPLY|CREATE|UPDATE)"/ &&
			    $0 !~ /resource="(leases|events|pods|replicasets|endpoints|endpointslices|selfsubjectaccessreviews)"/ &&
			    $0 ~ /subresource=""/) w += n
		}
		END { printf "%d %d %d\n", all, w, dry }'
}
export STATE=$work/cluster
declare -A t_reinstall t_uninstall t_install2 t_upgrade t_canary r_install w_install d_install w_reinstall
run_tool() { # name binary round: one fresh cluster; records times and counts
	local name=$1 bin=$2 i=$3 log=$work/$1-$3.log
	hack/kube/up.sh >/dev/null 2>&1
	export KUBECONFIG=$STATE/kubeconfig
	local m0 m1 m2 a b c d e f g
	step() { echo "== $*" >>"$log"; "$@" >>"$log" 2>&1 || { echo "[bench] $name round $i: $* failed (log: $log)" >&2; cat "$log" >&2; exit 1; }; }
	m0=$(metrics); a=$(now_ms)
	step "$bin" install -y "${SETS[@]}"
	b=$(now_ms); m1=$(metrics)
	step "$bin" install -y "${SETS[@]}"
	c=$(now_ms); m2=$(metrics)
	step "$bin" uninstall --purge -y
	d=$(now_ms)
	if [ -n "${UNINSTALL_ONLY:-}" ]; then
		t_uninstall[$name]+="$((d - c)) "
		unset KUBECONFIG
		hack/kube/down.sh >/dev/null 2>&1
		return
	fi
	# Upstream returns before the CRDs are gone: the next install waits until they are, so
	# that both tools install into the same empty cluster.
	until ! bin/kubectl get crd -o name 2>/dev/null | grep -q istio.io; do sleep 0.05; done
	e=$(now_ms)
	step "$bin" install -y "${SETS[@]}"
	f=$(now_ms)
	# In-place upgrade: a new tag for the same revision.
	step "$bin" install -y "${SETS[@]}" --set tag=1.30.1
	g=$(now_ms)
	# Canary upgrade: a second revision, then the default tag moved to it.
	step "$bin" install -y "${SETS[@]}" --set tag=1.30.2 --set revision=canary
	step "$bin" tag set default --revision canary --overwrite -y
	h=$(now_ms)
	t_install[$name]+="$((b - a)) "; t_reinstall[$name]+="$((c - b)) "; t_uninstall[$name]+="$((d - c)) "
	t_install2[$name]+="$((f - e)) "; t_upgrade[$name]+="$((g - f)) "; t_canary[$name]+="$((h - g)) "
	local r0 w0 d0 r1 w1 d1 r2 w2 d2
	read -r r0 w0 d0 <<<"$m0"
	read -r r1 w1 d1 <<<"$m1"
	read -r r2 w2 d2 <<<"$m2"
	r_install[$name]+="$((r1 - r0)) "
	w_install[$name]+="$((w1 - w0)) "
	d_install[$name]+="$((d1 - d0)) "
	w_reinstall[$name]+="$((w2 - w1)) "
	unset KUBECONFIG
	hack/kube/down.sh >/dev/null 2>&1
}
# both_tools ROUND: run_tool for ours and upstream, which goes first alternating (as for
# install against BASE), so that what the machine does after a cluster's teardown, or a
# trend in its load, hits both alike.
both_tools() {
	if [ $(($1 % 2)) = 1 ]; then
		run_tool ours "$OURS" "$1"
		run_tool upstream "$UPSTREAM" "$1"
	else
		run_tool upstream "$UPSTREAM" "$1"
		run_tool ours "$OURS" "$1"
	fi
}
# uninstall_limit records the uninstall's limit: our median no slower than upstream's.
uninstall_limit() {
	limit "uninstall --purge" "$(le "$(med ${t_uninstall[ours]})" "$(med ${t_uninstall[upstream]})")" \
		"our median $(med ${t_uninstall[ours]}) ms is over upstream's $(med ${t_uninstall[upstream]}) ms"
}
if [ "${1:-}" = uninstall ]; then
	# Only uninstall --purge -y, ours against upstream: RUNS rounds, each a fresh cluster per
	# tool, alternating; install -y twice, then the timed uninstall (run_tool's first steps).
	UNINSTALL_ONLY=1
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	for i in $(seq 1 "$RUNS"); do
		echo "[bench] uninstall round $i/$RUNS" >&2
		both_tools "$i"
	done
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	startup=$(KUBECONFIG=/nonexistent bin/benchcmp -n 10 ours "$OURS" version --remote=false ::: upstream "$UPSTREAM" version --remote=false | grep -v ' / \| - ')
	echo "uninstall --purge -y, $RUNS rounds, wall ms median (min-max); load average $load0 at the start, $load1 at the end, on $(nproc) CPUs"
	echo "ours:     $(stats ${t_uninstall[ours]})   [${t_uninstall[ours]% }]"
	echo "upstream: $(stats ${t_uninstall[upstream]})   [${t_uninstall[upstream]% }]"
	echo "start-up (version --remote=false, median of 10):"
	echo "$startup"
	uninstall_limit
	exit_on_missed
	exit 0
fi
# precheck_cost: x precheck on one fresh, clean cluster, this tree against BASE (before a
# change to precheck, its extra cost) and upstream's x precheck, alternating
# (hack/benchcmp); and the apiserver's requests of one precheck of each, dry runs counted
# apart from the rest (metrics). Needs $work/base.bin.
precheck_cost() {
	local state=$work/precheck-cluster a b name bin a1 aw ad b1 bw bd
	STATE=$state hack/kube/up.sh >/dev/null 2>&1
	export KUBECONFIG=$state/kubeconfig
	echo "## x precheck on a clean cluster"
	echo
	echo "One fresh cluster, nothing installed; \`x precheck\` of the default profile, 10 runs each,"
	echo "alternating. This tree proves by server-side dry runs that the cluster admits every rendered"
	echo "object (CRDs only when a policy or webhook judges them) and a pod of each workload"
	echo "(docs/verify.md#admission); before issue 46, precheck checked namespace labels only."
	echo
	echo '```'
	bin/benchcmp -n 10 "this tree" "$OURS" x precheck ::: "$BASE" "$work/base.bin" x precheck ::: upstream "$UPSTREAM" x precheck
	echo '```'
	echo
	echo "| one precheck's apiserver requests | all | of them dry runs | writes |"
	echo "|---|---|---|---|"
	for name in "this tree" "$BASE" upstream; do
		case $name in "this tree") bin=$OURS ;; upstream) bin=$UPSTREAM ;; *) bin=$work/base.bin ;; esac
		a=$(STATE=$state metrics)
		"$bin" x precheck >/dev/null 2>&1 || true
		b=$(STATE=$state metrics)
		read -r a1 aw ad <<<"$a"
		read -r b1 bw bd <<<"$b"
		echo "| $name | $((b1 - a1)) | $((bd - ad)) | $((bw - aw)) |"
	done
	echo
	unset KUBECONFIG
	STATE=$state hack/kube/down.sh >/dev/null 2>&1
}
if [ "${1:-}" = precheck ]; then
	# Only the precheck section: this tree against BASE and upstream, ~1 minute.
	build_base "$work"
	precheck_cost
	exit 0
fi
# The base commit's binary: this tree's install -y against it, in the same rounds.
build_base "$work"

machine="$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go version | cut -d' ' -f3)"

{
	echo "# Benchmarks"
	echo
	echo "Generated by \`make bench\` (hack/bench.sh) on $(date -u +%Y-%m-%d). Machine: $machine."
	echo "Ours: this repository's \`bin/istioctl\`. Upstream: istioctl master \`$UPSTREAM_VERSION\`."
	echo "Runs alternate between the two tools in one process, so machine noise hits both alike; read the ratios."
	echo "Offline commands run fresh copies of both binaries (a binary the linker just wrote maps ~2 MiB more)."
	echo
	echo "## manifest generate (offline), $RENDER_RUNS runs each"
	echo
} >"$out"

# Fresh copies of both binaries, as hack/bench-render.sh and hack/bench-startup.sh measure:
# a binary the linker just wrote maps ~2 MiB more than a copy of the same bytes.
cp "$OURS" "$work/ours.bin"
cp "$UPSTREAM" "$work/upstream.bin"
for p in default demo ambient; do
	echo "[bench] manifest generate $p" >&2
	{
		echo "### profile $p"
		echo
		echo '```'
		KUBECONFIG=/nonexistent bin/benchcmp -n "$RENDER_RUNS" \
			"ours" "$work/ours.bin" manifest generate --set profile=$p \
			::: "upstream" "$work/upstream.bin" manifest generate --set profile=$p --set hub=docker.io/istio --set tag="$ISTIO_VERSION"
		echo '```'
		echo
	} >>"$out"
done

# The floor: what any tool must at least do, done with kubectl alone. Install: the
# namespace, one server-side apply of our rendered objects, the rollout of both
# Deployments. Uninstall: one delete of the same objects, waiting until they are gone.
"$OURS" manifest generate "${SETS[@]}" >"$work/floor.yaml"
run_floor() { # round
	local i=$1 log=$work/floor-$1.log a b c
	hack/kube/up.sh >/dev/null 2>&1
	export KUBECONFIG=$STATE/kubeconfig
	a=$(now_ms)
	{
		bin/kubectl create namespace istio-system &&
			bin/kubectl apply --server-side --field-manager=floor -f "$work/floor.yaml" &&
			bin/kubectl rollout status -n istio-system deployment/istiod deployment/istio-ingressgateway --timeout=5m
	} >>"$log" 2>&1 || { echo "[bench] floor round $i: install failed (log: $log)" >&2; cat "$log" >&2; exit 1; }
	b=$(now_ms)
	bin/kubectl delete --wait -f "$work/floor.yaml" >>"$log" 2>&1 || { echo "[bench] floor round $i: delete failed" >&2; cat "$log" >&2; exit 1; }
	c=$(now_ms)
	t_install[floor]+="$((b - a)) "; t_uninstall[floor]+="$((c - b)) "
	unset KUBECONFIG
	hack/kube/down.sh >/dev/null 2>&1
}
for i in $(seq 1 "$RUNS"); do
	echo "[bench] cluster round $i/$RUNS" >&2
	both_tools "$i"
	run_floor "$i"
	install_pair "$OURS" "$i"
done

{
	echo "## the cluster operations, $RUNS rounds each, against upstream and the kubectl floor"
	echo
	echo "Each round gives each tool a new local control plane (etcd, kube-apiserver, controller-manager,"
	echo "scheduler, kwok; see docs/development.md) with the bed's real istiod (pilot-discovery at the pinned"
	echo "upstream version, run by hack/realistiod for each istiod pod: an install waits for a real istiod to"
	echo "answer, which then writes its CA bundle, fail-close policy and root certificates, and a re-install"
	echo "must leave those be), and runs, in order: install of the default profile, the"
	echo "same install again, uninstall --purge, install again (once the CRDs are gone: upstream's uninstall"
	echo "returns before), an in-place upgrade (\`--set tag=1.30.1\`), and a canary upgrade (\`--set"
	echo "revision=canary\`, then \`tag set default --revision canary --overwrite\`). Both uninstalls delete"
	echo "the same objects; ours returns when every one is gone, upstream's once the deletes are sent."
	echo "The floor is kubectl alone on a third fresh cluster: \`create namespace\`, one \`apply"
	echo "--server-side\` of our rendered manifest and \`rollout status\` of both Deployments; then \`delete"
	echo "--wait\` of the same objects."
	echo "Request counts are the apiserver's \`apiserver_request_total\` over the run, so they include the"
	echo "controllers reacting to the objects. Writes are POST, PUT, PATCH, APPLY and DELETE requests to"
	echo "objects, without those the controllers and kwok send on their own and an install never does (leases,"
	echo "events, pods, ReplicaSets, Endpoints, EndpointSlices, and every status subresource); dry runs"
	echo "(\`dryRun=All\`: our plan's admission check, docs/install.md) write nothing and are counted apart."
	echo
	echo "| wall ms, median (min-max) | ours | upstream | floor | upstream / ours | ours / floor |"
	echo "|---|---|---|---|---|---|"
	for k in install reinstall uninstall install2 upgrade canary; do
		declare -n T=t_$k
		label=$k
		case $k in
		install2) label="install after uninstall" ;;
		upgrade) label="in-place upgrade" ;;
		canary) label="canary upgrade + tag set" ;;
		esac
		fl="" fr=""
		if [ -n "${T[floor]:-}" ]; then fl=$(stats ${T[floor]}); fr=$(ratio "$(med ${T[ours]})" "$(med ${T[floor]})"); fi
		echo "| $label | $(stats ${T[ours]}) | $(stats ${T[upstream]}) | $fl | $(ratio "$(med ${T[upstream]})" "$(med ${T[ours]})") | $fr |"
	done
	echo
	echo "| apiserver requests, median | ours | upstream |"
	echo "|---|---|---|"
	echo "| install: all requests | $(med ${r_install[ours]}) | $(med ${r_install[upstream]}) |"
	echo "| install: write requests | $(med ${w_install[ours]}) | $(med ${w_install[upstream]}) |"
	echo "| install: dry runs (not writes; our plan's admission check) | $(med ${d_install[ours]}) | $(med ${d_install[upstream]}) |"
	echo "| re-install: write requests | $(med ${w_reinstall[ours]}) | $(med ${w_reinstall[upstream]}) |"
	echo
} >>"$out"
install_vs_base >>"$out"
echo "[bench] x precheck on a clean cluster" >&2
precheck_cost >>"$out"
install_vs_base_limit
uninstall_limit
limit "install" "$(le "$(med ${t_install[ours]})" "$(med ${t_install[upstream]})")" \
	"our median $(med ${t_install[ours]}) ms is over upstream's $(med ${t_install[upstream]}) ms"
echo "[bench] the cluster lock's cost" >&2
{
	echo "## The cluster lock"
	echo
	echo "Every writer takes it (docs/install.md). Client-side request counts and wall times of taking, renewing"
	echo "and releasing it on a fresh local cluster (\`TestLockCost\` in operator/lock, renewing every 250 ms;"
	echo "\`hack/bench.sh lock\` prints this alone):"
	echo
	echo '```'
	lock_lines=$(lock_cost "$work/lock-cluster")
	echo "$lock_lines"
	echo '```'
	echo
} >>"$out"
# TestLockCost fails when the lock takes more than 3 requests plus one per renewal, or more
# than 50 ms to take and release.
limit "the cluster lock" "$(grep -q 'FAILED' <<<"$lock_lines" && echo 0 || echo 1)" \
	"TestLockCost failed: over 3 requests + 1 per renewal, or take + release over 50 ms"
echo "[bench] x fleet install against upstream's steps" >&2
fleet_rc=0
{
	echo "## x fleet install of 3 clusters against upstream's steps in sequence (hack/bench-fleet.sh)"
	echo
	OURS=$OURS UPSTREAM=$UPSTREAM hack/bench-fleet.sh || fleet_rc=$?
	echo
} >>"$out"
limit "fleet install" "$([ "$fleet_rc" = 0 ] && echo 1 || echo 0)" \
	"ours over the same installs run beside each other + 1 s (the section above)"
echo "[bench] upgrade --strategy revision against upstream's canary steps" >&2
revupgrade_rc=0
{
	echo "## upgrade --strategy revision of 100 workloads in 10 batches against upstream's canary steps (hack/bench-revupgrade.sh)"
	echo
	OURS=$OURS UPSTREAM=$UPSTREAM hack/bench-revupgrade.sh || revupgrade_rc=$?
	echo
} >>"$out"
limit "revision upgrade" "$([ "$revupgrade_rc" = 0 ] && echo 1 || echo 0)" \
	"ours' overhead above its batches over half of upstream's above its restarts (the section above)"
echo "[bench] in-place upgrade against upstream's" >&2
{
	echo "## in-place upgrade, node by node, against upstream's \`istioctl upgrade\` (hack/bench-upgrade.sh)"
	echo
	OURS=$OURS UPSTREAM=$UPSTREAM hack/bench-upgrade.sh || echo "(hack/bench-upgrade.sh failed: exit $?)"
	echo
} >>"$out"
# Render's own cost (whole process minus the same binary's start-up) and max RSS, with the
# start-up and inittrace figures of both binaries: hack/bench-render.sh, which exits 1 when
# its limits (20x upstream's cost, 48 MiB, every profile) are missed.
render_rc=0
{
	echo "## render's own cost: manifest generate minus start-up (hack/bench-render.sh)"
	echo
	echo '```'
	RUNS=$RENDER_RUNS OURS=$OURS UPSTREAM=$UPSTREAM hack/bench-render.sh 2>&1 || render_rc=$?
	echo '```'
	echo
} >>"$out"
limit "render" "$([ "$render_rc" = 0 ] && echo 1 || echo 0)" \
	"manifest generate's own cost under 20x upstream's, or max RSS over 48 MiB, in a profile (the section above)"
{
	echo "## start-up against ${BASE:-main} (hack/bench-startup.sh)"
	echo
	echo "This tree against the base commit, offline: the medians' differences, against the budget of"
	echo "+2 ms (CPU time) and +1 MiB (max RSS) a change may add to the offline commands."
	echo
	hack/bench-startup.sh || true
} >>"$out"
{
	echo "## limits"
	echo
	if [ ${#missed[@]} -eq 0 ]; then
		echo "Every limit held."
	else
		printf -- '- MISSED %s\n' "${missed[@]}"
	fi
	echo
} >>"$out"
cp "$out" docs/benchmarks.md
cat docs/benchmarks.md
exit_on_missed

#!/usr/bin/env bash
# The README's test commands: `make test` (hack/test.sh test) and `make e2e` (hack/test.sh e2e).
#
#   test  unit tests and the tests on one shared local cluster (with a real istiod)
#   e2e   the tests that need the multi-cluster bed or a cluster of their own (fault tests,
#         the harness's self-tests), and every fuzz target for 20000 execs (beside the tests, at
#         idle priority)
#
# A test's tier follows from what it asks pkg/testing/cluster for (cluster.EnvTier); this
# script keeps no list of test names. Outside the sandbox it downloads modules, builds the
# cluster binaries (cached per machine) and links each test binary once; then it re-runs
# itself in a network namespace that has only loopback and runs the binaries there, one
# package at a time per lane (make test: two lanes, each with a shared cluster of its own),
# printing each test's result and seconds as it ends (hack/testfmt).
#
# Knobs: RUN (a -run regexp), PKGS (package patterns, default ./...), TEST_TIMEOUT (per test
# binary, default 40m), TEST_RESULTS (where a failed run's go test -json is kept),
# TEST_LANES (make test's lanes, default 2), TEST_SHARDS (below).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
log() { printf '[test] %s\n' "$*" >&2; }

tier=${1:-test}
# TEST_SHARDS cuts the packages whose tests outlast a lane's share into shards, each a
# queue entry of its own (a -test.run of every other test of the package, in its own
# cluster): "package=shards ...". Measured warm (2 cores, 2 lanes): operator/action 745 s
# and pkg/cmd 500 s of a 1,340 s test tier, so one lane ran 745 s while the other idled.
# Only make test with more than one lane and no RUN is cut.
shards=${TEST_SHARDS-operator/action=2 pkg/cmd=2}
# shard_queue QUEUE rewrites the queue ("import-path dir" lines) with the shards first, as
# "import-path#i dir regexp" lines.
shard_queue() {
	local queue=$1 spec pkg n line dir names i j first=() rest
	[ "$tier" = test ] && [ -z "${RUN:-}" ] && [ "${TEST_LANES:-2}" != 1 ] || return 0
	rest=$(cat "$queue")
	for spec in $shards; do
		pkg=$module/${spec%=*} n=${spec#*=}
		line=$(grep -m1 "^$pkg " <<<"$rest") || continue
		dir=${line#* }
		mapfile -t names < <(cd "$dir" && "$bins/${pkg##*/}.test" -test.list '^Test' 2>/dev/null | grep '^Test')
		[ ${#names[@]} -ge "$n" ] || continue
		for ((i = 0; i < n; i++)); do
			local pick=()
			for ((j = i; j < ${#names[@]}; j += n)); do pick+=("${names[j]}"); done
			first+=("$pkg#$((i + 1)) $dir ^($(IFS='|'; echo "${pick[*]}"))\$")
		done
		rest=$(grep -v "^$pkg " <<<"$rest" || true)
	done
	{ [ ${#first[@]} = 0 ] || printf '%s\n' "${first[@]}"; [ -z "$rest" ] || echo "$rest"; } >"$queue"
}
case $tier in
test | e2e | warm) ;;
*) log "usage: hack/test.sh [test|e2e|warm]"; exit 64 ;;
esac
module=$(go list -m)

# One flag set for every build the tests make, as make build's: packages compiled for the
# test binaries, go vet and the binaries the tests build (istioctl at other versions) share
# the build cache.
export CGO_ENABLED=0 GOFLAGS="-trimpath ${GOFLAGS:-}"

# warm: what both tiers compile, into the build cache, and nothing run: go vet of every
# package (which compiles every package the tests import) and the fuzz targets'
# instrumented builds. .ci/run starts it at idle priority beside the cluster binaries'
# build: on a cold machine it fills the cache from the CPU time that build and the tests
# leave (downloads, links, waits on clusters), so make test's compile and make e2e's fuzz
# step find most of their work done.
if [ "$tier" = warm ]; then
	start=$SECONDS
	go vet ./... || true # make test's own go vet says what is wrong
	"$root/hack/fuzz.sh" --build
	log "warmed the build cache in $((SECONDS - start))s"
	exit 0
fi

if [ "${2:-}" != "--inside" ]; then
	start=$SECONDS
	export TEST_STARTED=$(date +%s)
	# Each first build fills its own cache under a lock; the module downloads overlap the
	# cluster binaries' build.
	go mod download &
	dl=$!
	"$root/hack/kube/build.sh" &
	kube=$!
	# Upstream's charts (the istio.io/istio module at the pinned version) for the migration tests.
	. "$root/hack/upstream.env"
	go mod download "istio.io/istio@$UPSTREAM_VERSION" &
	extra=$!
	# The images tests' registry is Debian's package, installed by .ci/run: said now, not
	# by every images test later.
	command -v docker-registry >/dev/null ||
		echo "[test] docker-registry is missing: apt-get install docker-registry (the images tests need it)" >&2
	wait $dl
	bins=${TEST_BIN_DIR:-$root/.test-bin/$tier}
	rm -rf "$bins"
	mkdir -p "$bins"
	go build -o "$bins/testfmt" ./hack/testfmt
	# The packages of this tier: make test runs every package; make e2e those whose tests
	# use pkg/testing/cluster (the others have no test that needs the bed).
	mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}} {{join .TestImports " "}} {{join .XTestImports " "}}{{end}}' ${PKGS:-./...} |
		awk -v tier="$tier" -v c="$module/pkg/testing/cluster" 'NF {
			uses = 0; for (i = 3; i <= NF; i++) if ($i == c) uses = 1
			if (tier == "test" || uses) print $1, $2 }')
	# The test binaries compile after the cluster binaries, not beside them: both modules
	# pin the same versions of the libraries they share (client-go, helm, gRPC, ...), so
	# on a cold machine the second build takes those from the build cache instead of both
	# compiling them at once (TestSharedModuleVersions keeps the versions in step).
	wait $kube
	log "compiling ${#pkgs[@]} test binaries"
	[ "$tier" != test ] || go vet ./...
	# Each test binary is linked once, here, and run as it is inside the sandbox. Without
	# DWARF (-w) and the symbol table (-s): nothing debugs them, and the links are shorter;
	# panics and stack traces keep their file:line.
	go test -c -ldflags="-s -w" -o "$bins/" $(printf '%s\n' "${pkgs[@]}" | cut -d' ' -f1)
	# The queue the lanes take packages from, heaviest first: by the tests that ask for a
	# cluster (what takes the time), so the longest package starts at once.
	for p in "${pkgs[@]}"; do
		read -r _ dir <<<"$p"
		echo "$(cat "$dir"/*_test.go | grep -c 'cluster\.\(Get\|GetBed\|StartPrivate\)' || true) $p"
	done | sort -rn -s -k1,1 | cut -d' ' -f2- >"$bins/packages"
	shard_queue "$bins/packages"
	if [ "$tier" = test ] && [ -z "${PKGS:-}" ]; then
		# The CRD generator, a module of its own (tools/crdgen): its tests with the rest.
		(cd tools/crdgen && go mod download && go test -c -ldflags="-s -w" -o "$bins/crdgen.test" .)
		echo "local/crdgen $root/tools/crdgen" >>"$bins/packages"
	fi
	wait $extra
	log "built in $((SECONDS - start))s"
	# Pin Go's caches to where they are now: the sandbox gets its own HOME.
	export GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
	export TEST_BIN_DIR=$bins
	if [ "$(id -u)" = 0 ]; then
		exec unshare --net -- "$0" "$tier" --inside
	fi
	# Without root: a user namespace maps us to root inside, which may create the netns.
	exec unshare --map-root-user --net -- "$0" "$tier" --inside
fi

# --- inside the loopback-only network namespace ---------------------------------------
ip link set lo up
# Ephemeral ports from above the clusters' port blocks (hack/kube/up.sh takes blocks from
# 26000 to 44999): a client's port can never be one a cluster or its istiods bind.
echo "45000 65535" >/proc/sys/net/ipv4/ip_local_port_range ||
	log "could not move the ephemeral port range (clusters may meet a port a client took)"
tmp=$(mktemp -d /tmp/istioctl-test.XXXXXX)
bins=$TEST_BIN_DIR
# Lanes: make test runs its packages in TEST_LANES (2) lanes side by side, each lane with a
# shared cluster of its own (its own ports and service range), taking the next package from
# one queue when its last one ends; within a lane, one package at a time, since a package's
# tests share the lane's cluster and install and purge cluster-wide objects (CRDs,
# webhooks). Much of a cluster test is waiting (rollouts, watches, istiod's start), which
# the other lane fills. make e2e runs one lane: its beds and private clusters are large.
lanes=1
[ "$tier" != test ] || lanes=${TEST_LANES:-2}
[[ $lanes =~ ^[1-9][0-9]*$ ]] || { log "TEST_LANES=$lanes: want a whole number of lanes, 1 or more"; exit 64; }
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
	[ -z "${fuzz:-}" ] || kill -- -"$fuzz" 2>/dev/null || true
	if [ $rc != 0 ]; then
		for st in "$tmp"/cluster-*; do
			[ ! -d "$st" ] || report "$st" "shared cluster $(basename "$st")"
		done
		for st in "$tmp"/bed/cluster-*; do
			[ ! -d "$st" ] || report "$st" "bed $(basename "$st")"
		done
	fi
	[ ! -d "$tmp/bed" ] || STATE=$tmp/bed "$root/hack/kube/bed-down.sh" || true
	for st in "$tmp"/cluster-*; do
		[ ! -d "$st" ] || STATE=$st "$root/hack/kube/down.sh" || true
	done
	rm -rf "$tmp"
	log "the $tier tier took $(($(date +%s) - TEST_STARTED)) s in all (exit $rc)"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Tests and the tools they run never touch the user's ~/.kube or ~/.istioctl, and what
# they leave in the temporary directory (builds at other versions, private clusters) goes
# with the run.
export HOME=$tmp/home TMPDIR=$tmp/tmp
# The istioctl binaries tests build (harness.BuildIstioctl), once per version for the run.
export ISTIOCTL_TEST_BUILDS=$tmp/builds
mkdir -p "$HOME" "$TMPDIR"
export ISTIOCTL_TEST_TIER=$tier
if [ "$tier" = test ]; then
	# ISTIOCTL_TEST_REAL_ISTIOD=0 runs the clusters without a real istiod (the tests that
	# need one fail). Each lane's cluster takes a port block of its own.
	ups=()
	for i in $(seq "$lanes"); do
		STATE=$tmp/cluster-$i PORT_BASE=$((26000 + 1000 * (i - 1))) REAL_ISTIOD=${ISTIOCTL_TEST_REAL_ISTIOD:-1} \
			"$root/hack/kube/up.sh" >/dev/null &
		ups+=($!)
	done
	for pid in "${ups[@]}"; do wait "$pid"; done
fi
export ISTIOCTL_TEST_BED=$tmp/bed ISTIOCTL_TEST_BED_OWNER=$$
# Every install a test runs waits at most 2 minutes for readiness unless it says otherwise:
# a component that is not ready by then will not be, and a failure says so sooner.
export ISTIOCTL_READINESS_TIMEOUT=${ISTIOCTL_READINESS_TIMEOUT:-2m}
unset KUBECONFIG
# Nothing may be fetched from here on: there is no network, and there must be no need.
export GOPROXY=off GOFLAGS="$GOFLAGS -mod=readonly"

# next prints the next package of the queue ("import-path dir") and takes it off, or
# nothing when the queue is empty.
queue=$tmp/queue
cp "$bins/packages" "$queue"
next() {
	flock "$queue.lock" bash -c 'head -n 1 "$1"; sed -i 1d "$1"' _ "$queue"
}
# lane I runs packages from the queue on cluster I until the queue is empty. The limit per
# test binary is a safety net for a hung test, not the budget.
lane() {
	local i=$1 pkg dir name rc=0
	if [ "$tier" = test ]; then
		export ISTIOCTL_TEST_KUBECONFIG=$tmp/cluster-$i/kubeconfig KUBECACHEDIR=$tmp/cluster-$i/kubecache
	fi
	while read -r pkg dir run < <(next) && [ -n "$pkg" ]; do
		name=${pkg%#*} name=${name##*/}.test
		[ -x "$bins/$name" ] || continue
		run=${run:-${RUN:-}}
		(cd "$dir" && go tool test2json -t -p "$pkg" "$bins/$name" -test.v=test2json -test.count=1 \
			-test.timeout="${TEST_TIMEOUT:-40m}" ${run:+-test.run="$run"} </dev/null) || rc=1
	done
	return $rc
}
results=${TEST_RESULTS:-$root/.test-results}
mkdir -p "$results"
log "running the $tier tier's tests in $lanes lane(s)"
rc=0
# make e2e's short fuzz runs (make fuzz runs them for 2 minutes each) go beside its tests at
# idle priority: they take the CPU the multi-cluster tests leave while they wait on their
# clusters, instead of running after them; their output follows the tests'.
fuzz=
if [ "$tier" = e2e ] && [ -z "${RUN:-}" ]; then
	setsid -w chrt --idle 0 "$root/hack/fuzz.sh" "${FUZZTIME:-20000x}" >"$tmp/fuzz.log" 2>&1 &
	fuzz=$! # a session of its own: cleanup stops its go commands with it
fi
streams=() running=()
for i in $(seq "$lanes"); do
	mkfifo "$tmp/lane-$i"
	streams+=("$tmp/lane-$i")
	lane "$i" >"$tmp/lane-$i" 2>&1 &
	running+=($!)
done
"$bins/testfmt" -json "$results/$tier-$(date +%Y%m%d-%H%M%S).json" -keep-on-failure "${streams[@]}" || rc=$?
for pid in "${running[@]}"; do wait "$pid" || rc=1; done
if [ -n "$fuzz" ]; then
	fuzz_rc=0
	wait "$fuzz" || fuzz_rc=$?
	log "short fuzz runs, ${FUZZTIME:-20000x} each, beside the tests (exit $fuzz_rc):"
	grep -v '^fuzz: elapsed' "$tmp/fuzz.log" >&2 || true
	[ "$fuzz_rc" = 0 ] || rc=1
fi
exit $rc

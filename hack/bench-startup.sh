#!/usr/bin/env bash
# make bench-startup: start-up cost of this tree against a base commit (BASE, default main):
# wall, CPU and max RSS of `version --remote=false` and `manifest generate`, alternating runs,
# in ROUNDS rounds of RUNS, with the median of the rounds' differences of the medians against
# the budget (+2 ms, +1 MiB max RSS). The time budget is judged on CPU time (user + system):
# on a shared 2-CPU machine the wall median moves by more than 2 ms between identical
# binaries. Offline and without the upstream binary; exits 1 when over budget.
#
# Both binaries are copied fresh before measuring: the max RSS of a Go binary this size is
# mostly its file-backed pages, and how many of them a run maps depends on how the file got
# into the page cache (a binary the linker just wrote maps ~2 MiB more than a cp of the same
# bytes), which alone would exceed the budget.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BASE=${BASE:-main}
RUNS=${RUNS:-20}
ROUNDS=${ROUNDS:-5}
CPU_BUDGET_MS=${CPU_BUDGET_MS:-2}
RSS_BUDGET_MIB=${RSS_BUDGET_MIB:-1}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

rev=$(git rev-parse --verify "$BASE^{commit}")
echo "[bench-startup] building $BASE ($(git rev-parse --short "$rev")) and this tree" >&2
git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1
# Built as make build builds bin/istioctl (static, no cgo).
(cd "$work/base" && CGO_ENABLED=0 go build -trimpath -o "$work/base.bin" ./cmd/istioctl)
CGO_ENABLED=0 go build -trimpath -o "$work/this.bin" ./cmd/istioctl
go build -o "$work/benchcmp" ./hack/benchcmp
mkdir -p "$work/bin"
cp "$work/base.bin" "$work/bin/base"
cp "$work/this.bin" "$work/bin/this"

over=0
for cmd in "version --remote=false" "manifest generate"; do
	echo "### $cmd: $ROUNDS rounds of $RUNS alternating runs each"
	echo
	echo '```'
	deltas=()
	for _ in $(seq 1 "$ROUNDS"); do
		# shellcheck disable=SC2086
		out=$(KUBECONFIG=/nonexistent HOME=$work "$work/benchcmp" -n "$RUNS" \
			base "$work/bin/base" $cmd ::: this "$work/bin/this" $cmd)
		echo "$out" | grep -v ' / '
		# "this - base: wall +1.0ms, CPU +0.4ms, max RSS +0.3 MiB" -> "0.4 0.3"
		deltas+=("$(echo "$out" | awk '/^this - base:/ { c = $7; sub(/ms,$/, "", c); print c + 0, $10 + 0 }')")
	done
	echo '```'
	# The median of the rounds' differences: one round on a busy machine can be off by more
	# than the budget either way.
	median() { sort -g | awk '{ a[NR] = $1 } END { printf "%+.2f", a[int((NR + 1) / 2)] }'; }
	cpu=$(printf '%s\n' "${deltas[@]}" | cut -d' ' -f1 | median)
	rss=$(printf '%s\n' "${deltas[@]}" | cut -d' ' -f2 | median)
	verdict=$(awk -v c="$cpu" -v r="$rss" -v cb="$CPU_BUDGET_MS" -v rb="$RSS_BUDGET_MIB" \
		'BEGIN { print (c + 0 <= cb && r + 0 <= rb) ? "within" : "OVER" }')
	echo
	echo "$cmd against $BASE, median of the rounds: CPU ${cpu} ms, max RSS ${rss} MiB: $verdict budget (+${CPU_BUDGET_MS} ms CPU, +${RSS_BUDGET_MIB} MiB max RSS)"
	echo
	[ "$verdict" = within ] || over=1
done
exit $over

#!/usr/bin/env bash
# make bench-startup: start-up cost of this tree against a base commit (BASE, default main):
# wall, CPU and max RSS of `version --remote=false` and `manifest generate`, alternating runs,
# with the differences of the medians against the budget (+2 ms, +1 MiB max RSS). The time
# budget is judged on CPU time (user + system): on a shared 2-CPU machine the wall median
# moves by more than 2 ms between identical binaries. Offline and without the upstream
# binary; exits 1 when over budget.
#
# Both binaries are copied fresh before measuring: the max RSS of a Go binary this size is
# mostly its file-backed pages, and how many of them a run maps depends on how the file got
# into the page cache (a binary the linker just wrote maps ~2 MiB more than a cp of the same
# bytes), which alone would exceed the budget.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BASE=${BASE:-main}
RUNS=${RUNS:-30}
CPU_BUDGET_MS=${CPU_BUDGET_MS:-2}
RSS_BUDGET_MIB=${RSS_BUDGET_MIB:-1}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

rev=$(git rev-parse --verify "$BASE^{commit}")
echo "[bench-startup] building $BASE ($(git rev-parse --short "$rev")) and this tree" >&2
git worktree add --detach "$work/base" "$rev" >/dev/null 2>&1
(cd "$work/base" && go build -trimpath -o "$work/base.bin" ./cmd/istioctl)
go build -trimpath -o "$work/this.bin" ./cmd/istioctl
go build -o "$work/benchcmp" ./hack/benchcmp
mkdir -p "$work/bin"
cp "$work/base.bin" "$work/bin/base"
cp "$work/this.bin" "$work/bin/this"

over=0
for cmd in "version --remote=false" "manifest generate"; do
	echo "### $cmd, $RUNS runs each"
	echo
	# shellcheck disable=SC2086
	out=$(KUBECONFIG=/nonexistent HOME=$work "$work/benchcmp" -n "$RUNS" \
		base "$work/bin/base" $cmd ::: this "$work/bin/this" $cmd)
	echo '```'
	echo "$out"
	echo '```'
	# "this - base: wall +1.0ms, CPU +0.4ms, max RSS +0.3 MiB"
	read -r cpu rss < <(echo "$out" | awk '/^this - base:/ { c = $7; sub(/ms,$/, "", c); print c, $10 }')
	verdict=$(awk -v c="$cpu" -v r="$rss" -v cb="$CPU_BUDGET_MS" -v rb="$RSS_BUDGET_MIB" \
		'BEGIN { print (c + 0 <= cb && r + 0 <= rb) ? "within" : "OVER" }')
	echo
	echo "$cmd: CPU ${cpu} ms, max RSS ${rss} MiB against $BASE: $verdict budget (+${CPU_BUDGET_MS} ms CPU, +${RSS_BUDGET_MIB} MiB max RSS)"
	echo
	[ "$verdict" = within ] || over=1
done
exit $over

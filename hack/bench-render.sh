#!/usr/bin/env bash
# Render's own cost against upstream's: for each profile, one alternating run (hack/benchcmp)
# of four commands: each binary's start-up (`version --remote=false`) and its whole
# `manifest generate`. Render is read as the whole process minus the same binary's start-up,
# so a machine where start-up is a bigger share does not move the ratio. Prints, per binary,
# start-up, whole, their difference and max RSS, the ratio of the differences, and the
# GODEBUG=inittrace totals of both start-ups (so two machines' runs can be compared).
#
# Limits, for every profile: upstream's render cost at least RENDER_RATIO (20) times ours,
# and our max RSS at most RENDER_RSS_MIB (48; the Base CRDs carry the API's descriptions and
# rules since istio.io/api's .proto sources make them, 936 KB where they were 484). Exits 1
# when one is missed, unless REPORT_ONLY=1.
#
#   OURS=bin/istioctl UPSTREAM=bin/upstream/istioctl RUNS=10 PROFILES="default demo ambient"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
RUNS=${RUNS:-10}
PROFILES=${PROFILES:-default demo ambient}
RENDER_RATIO=${RENDER_RATIO:-20}
RENDER_RSS_MIB=${RENDER_RSS_MIB:-48}
REPORT_ONLY=${REPORT_ONLY:-}
OURS=${OURS:-$root/bin/istioctl}
UPSTREAM=${UPSTREAM:-$root/bin/upstream/istioctl}
for b in "$OURS" "$UPSTREAM"; do
	[ -x "$b" ] || { echo "bench-render: no binary at $b (make build; hack/bench.sh installs upstream)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/benchcmp" ./hack/benchcmp
# Fresh copies: a binary's max RSS is mostly its file-backed pages, and how many a run maps
# depends on how the file got into the page cache (see hack/bench-startup.sh).
cp "$OURS" "$work/ours"
cp "$UPSTREAM" "$work/upstream"
export KUBECONFIG=/nonexistent HOME=$work
up_flags=(--set hub=docker.io/istio --set tag="$(hack/istio-version.sh)") # as hack/bench.sh: upstream's master has no release tag

# inittrace totals of a start-up, the median of 5: "<ms> ms, <MiB> MiB allocated at init".
inittotals() {
	for _ in 1 2 3 4 5; do
		GODEBUG=inittrace=1 "$1" version --remote=false 2>&1 >/dev/null |
			awk '/^init / { ms += $5; b += $8 } END { printf "%.1f %.1f\n", ms, b / 1048576 }'
	done | sort -g | awk 'NR == 3 { printf "%s ms, %s MiB allocated at init", $1, $2 }'
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "init (GODEBUG=inittrace=1, median of 5 start-ups): ours $(inittotals "$work/ours"); upstream $(inittotals "$work/upstream")"
echo

missed=0
for p in $PROFILES; do
	out=$("$work/benchcmp" -n "$RUNS" \
		ours-start "$work/ours" version --remote=false \
		::: ours "$work/ours" manifest generate --set profile="$p" \
		::: upstream-start "$work/upstream" version --remote=false \
		::: upstream "$work/upstream" manifest generate --set profile="$p" "${up_flags[@]}")
	echo "### manifest generate, profile $p: $RUNS alternating runs"
	echo
	echo '```'
	echo "$out" | grep -v ' / \| - '
	# Table rows: "NAME RUNS WALL (MIN-MAX) CPU (MIN-MAX) RSS MiB (MIN-MAX)".
	line=$(echo "$out" | awk -v ratio="$RENDER_RATIO" -v rsslim="$RENDER_RSS_MIB" '
		function num(s) { sub(/ms$/, "", s); return s + 0 }
		$2 ~ /^[0-9]+$/ { wall[$1] = num($3); cpu[$1] = num($5); rss[$1] = $7 + 0 }
		END {
			o = wall["ours"] - wall["ours-start"]; u = wall["upstream"] - wall["upstream-start"]
			r = (o > 0) ? u / o : 999
			printf "ours: start-up %.1fms, whole %.1fms, render %.1fms, max RSS %.1f MiB (start-up %.1f MiB)\n", wall["ours-start"], wall["ours"], o, rss["ours"], rss["ours-start"]
			printf "upstream: start-up %.1fms, whole %.1fms, render %.1fms, max RSS %.1f MiB (start-up %.1f MiB)\n", wall["upstream-start"], wall["upstream"], u, rss["upstream"], rss["upstream-start"]
			oc = cpu["ours"] - cpu["ours-start"]; uc = cpu["upstream"] - cpu["upstream-start"]
			printf "render CPU time (user+system, reported, not a limit): ours %.1fms, upstream %.1fms, %.1fx\n", oc, uc, (oc > 0) ? uc / oc : 999
			v = (r >= ratio && rss["ours"] <= rsslim) ? "within" : "MISSED"
			printf "render upstream/ours: %.1fx; %s (limits: >= %sx, max RSS <= %s MiB)\n", r, v, ratio, rsslim
		}')
	echo "$line"
	echo '```'
	echo
	case $line in *MISSED*) missed=1 ;; esac
done
if [ "$missed" = 1 ] && [ -z "$REPORT_ONLY" ]; then
	echo "bench-render: a render limit was missed (REPORT_ONLY=1 to only report)" >&2
	exit 1
fi

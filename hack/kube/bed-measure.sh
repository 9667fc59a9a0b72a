#!/usr/bin/env bash
# Measures a bed of 1, 2 and 3 clusters (or SIZES="..."): wall time of bed-up.sh (all
# members start at once) and, SETTLE (10) seconds later, the RSS of every process in its
# pid files, summed. RUNS (3) runs per size; prints one line per run and the load average,
# since a start on a shared 2-core machine is only as fast as the machine is idle.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
SIZES=${SIZES:-1 2 3}
RUNS=${RUNS:-3}
SETTLE=${SETTLE:-10}
work=$(mktemp -d /tmp/istioctl-bed-measure.XXXXXX)
export STATE=$work/bed
trap '"$here/bed-down.sh" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

rss_mib() { # sum of VmRSS over the bed's pid files, in MiB
	local f pid kb total=0
	for f in "$STATE"/pids/*.pid "$STATE"/cluster-*/pids/*.pid; do
		[ -f "$f" ] || continue
		read -r pid _ <"$f"
		kb=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
		total=$((total + ${kb:-0}))
	done
	echo $((total / 1024))
}

for n in $SIZES; do
	for run in $(seq 1 "$RUNS"); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		start=$(date +%s%N)
		CLUSTERS=$n "$here/bed-up.sh" >/dev/null 2>"$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
		took=$((($(date +%s%N) - start) / 1000000))
		sleep "$SETTLE"
		printf 'clusters=%d run=%d up=%d.%01ds rss=%dMiB load-before=%s\n' "$n" "$run" \
			$((took / 1000)) $((took % 1000 / 100)) "$(rss_mib)" "$load"
		"$here/bed-down.sh" >/dev/null 2>&1
	done
done

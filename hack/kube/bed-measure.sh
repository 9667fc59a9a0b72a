#!/usr/bin/env bash
# Measures a bed of 1, 2 and 3 clusters (or SIZES="..."): wall time of bed-up.sh (all
# members start at once), the CPU time the start cost (the scripts and tools it ran plus
# every component up to then), and, SETTLE (10) seconds later, the RSS of every process in
# its pid files, summed. RUNS (3) runs per size; prints one line per run with the load
# average: a start on a shared 2-core machine is only as fast as the machine is idle, while
# the CPU time is what it costs whatever the load (on 2 idle cores, wall >= cpu / 2).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
SIZES=${SIZES:-1 2 3}
RUNS=${RUNS:-3}
SETTLE=${SETTLE:-10}
work=$(mktemp -d /tmp/istioctl-bed-measure.XXXXXX)
export STATE=$work/bed
trap '"$here/bed-down.sh" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

pids() { # every pid in the bed's pid files
	local f pid
	for f in "$STATE"/pids/*.pid "$STATE"/cluster-*/pids/*.pid; do
		[ -f "$f" ] && read -r pid _ <"$f" && echo "$pid"
	done
}
rss_mib() { # sum of VmRSS over the bed's processes, in MiB
	local pid kb total=0
	for pid in $(pids); do
		kb=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
		total=$((total + ${kb:-0}))
	done
	echo $((total / 1024))
}
cpu_ticks() { # user+system clock ticks of the bed's processes so far
	local pid total=0 t
	for pid in $(pids); do
		t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
		total=$((total + ${t:-0}))
	done
	echo $total
}
hz=$(getconf CLK_TCK)

for n in $SIZES; do
	for run in $(seq 1 "$RUNS"); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		start=$(date +%s%N)
		# The children bed-up.sh waited for (up.sh, openssl, kubectl, curl) are in the
		# subshell's times; the components run on and are read from /proc.
		script_ticks=$( (CLUSTERS=$n "$here/bed-up.sh" >/dev/null 2>"$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
			awk '{print $16 + $17}' /proc/$BASHPID/stat) ) || exit 1
		took=$((($(date +%s%N) - start) / 1000000))
		cpu=$(((script_ticks + $(cpu_ticks)) * 10 / hz))
		sleep "$SETTLE"
		printf 'clusters=%d run=%d up=%d.%01ds cpu=%d.%01ds rss=%dMiB load-before=%s\n' "$n" "$run" \
			$((took / 1000)) $((took % 1000 / 100)) $((cpu / 10)) $((cpu % 10)) "$(rss_mib)" "$load"
		"$here/bed-down.sh" >/dev/null 2>&1
	done
done

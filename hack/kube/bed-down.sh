#!/usr/bin/env bash
# Stops every cluster bed-up.sh (or pkg/testing/cluster) started with this STATE (make
# cluster-down): the members in $STATE/cluster-* all at once, then a single cluster in
# $STATE itself, each with down.sh. Removes $STATE unless KEEP_STATE=1.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
STATE=${STATE:-$root/.cluster}

log() { printf '[cluster-down] %s\n' "$*" >&2; }
[ -d "$STATE" ] || { log "no cluster state in $STATE: nothing to stop"; exit 0; }

rc=0
pids=()
for s in "$STATE"/cluster-*/; do
	[ -d "$s/pids" ] || continue
	STATE=${s%/} "$here/down.sh" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [ -d "$STATE/pids" ]; then
	STATE=$STATE "$here/down.sh" || rc=1
fi
[ "${KEEP_STATE:-0}" = 1 ] || rm -rf "$STATE"
exit $rc

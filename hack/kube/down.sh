#!/usr/bin/env bash
# Stops the local control plane started by up.sh with the same STATE: the apiserver and its
# clients first, etcd last (the other order can hang the apiserver for minutes), SIGKILL
# after a grace period. Only processes whose binary is still the one we started are
# signalled. Removes $STATE unless KEEP_STATE=1.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
STATE=${STATE:-$root/.cluster}
GRACE=${GRACE:-15}

log() { printf '[cluster-down] %s\n' "$*" >&2; }

[ -d "$STATE/pids" ] || { log "no cluster state in $STATE: nothing to stop"; exit 0; }

# ours NAME: prints the pid if it still runs the binary we recorded
ours() {
	local f="$STATE/pids/$1.pid" pid exe
	[ -f "$f" ] || return 1
	read -r pid exe <"$f"
	[ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || return 1
	echo "$pid"
}

# running PID: true while the process exists and is not a zombie waiting to be reaped
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

stop() { # names... : SIGTERM together, wait up to GRACE, then SIGKILL
	local pids=() n p
	for n in "$@"; do
		p=$(ours "$n") && pids+=("$p")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -TERM "${pids[@]}" 2>/dev/null
	local deadline=$((SECONDS + GRACE))
	while [ $SECONDS -lt $deadline ]; do
		local left=0
		for p in "${pids[@]}"; do running "$p" && left=1; done
		[ $left = 1 ] || return 0
		sleep 0.2
	done
	log "SIGKILL after ${GRACE}s: $*"
	kill -KILL "${pids[@]}" 2>/dev/null
	for p in "${pids[@]}"; do while running "$p"; do sleep 0.1; done; done
}

stop realistiod fakelb kwok kube-scheduler kube-controller-manager kube-apiserver
stop etcd
rm -f "$STATE"/pids/*.pid
if [ "${KEEP_STATE:-0}" = 1 ]; then
	log "stopped; state kept in $STATE"
else
	rm -rf "$STATE"
	log "stopped; state removed"
fi

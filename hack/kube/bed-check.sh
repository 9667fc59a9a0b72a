#!/usr/bin/env bash
# Checks the multi-cluster test bed end to end, from a fresh clone of this checkout's HEAD:
# `make cluster-up CLUSTERS=N` (3); every context answers `kubectl get nodes` with Ready
# kwok nodes; the service ranges differ; a LoadBalancer Service in each cluster gets a
# distinct 192.0.2.x address; a second `make cluster-up` (one cluster) replaces the bed;
# `make cluster-down` leaves no pid file and no process of any cluster. Prints what it
# sees; exits non-zero on the first failed check.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${CLUSTERS:-3}
work=$(mktemp -d /tmp/istioctl-bed-check.XXXXXX)
clone=$work/clone
state=$clone/.cluster
trap '[ ! -d "$state" ] || (cd "$clone" && make -s cluster-down) >/dev/null 2>&1; rm -rf "$work"' EXIT
say() { printf '[bed-check] %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

git clone -q --branch "$(git -C "$root" rev-parse --abbrev-ref HEAD)" "$root" "$clone"
cd "$clone"
say "fresh clone of $(git rev-parse --short HEAD) in $clone"
start=$SECONDS
make -s cluster-up CLUSTERS="$N" >/dev/null
say "make cluster-up CLUSTERS=$N: $((SECONDS - start))s"
kubectl() { "$clone/bin/kubectl" --kubeconfig "$state/kubeconfig" --cache-dir "$state/kubecache" "$@"; }

say "contexts: $(kubectl config get-contexts -o name | tr '\n' ' ')"
ranges=() ips=()
for i in $(seq 1 "$N"); do
	ctx=cluster-$i
	say "--- $ctx: kubectl get nodes"
	kubectl --context "$ctx" get nodes -L type
	total=$(kubectl --context "$ctx" get nodes -o name | wc -l)
	ready=$(kubectl --context "$ctx" get nodes -l type=kwok \
		-o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)
	[ "$total" -gt 0 ] && [ "$ready" = "$total" ] || fail "$ctx: $ready of $total nodes are Ready kwok nodes"
	read -r pid _ <"$state/$ctx/pids/kube-apiserver.pid"
	range=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n 's/^--service-cluster-ip-range=//p')
	vip=$(kubectl --context "$ctx" get service kubernetes -o jsonpath='{.spec.clusterIP}')
	say "$ctx: kube-apiserver --service-cluster-ip-range=$range; Service default/kubernetes ClusterIP $vip"
	ranges+=("$range")
	kubectl --context "$ctx" create service loadbalancer bed-check --tcp=15443 >/dev/null
	lb_start=$(date +%s%N) ip=
	while [ -z "$ip" ] && [ $(($(date +%s%N) - lb_start)) -lt 2000000000 ]; do
		ip=$(kubectl --context "$ctx" get service bed-check -o jsonpath='{.status.loadBalancer.ingress[0].ip}')
	done
	[[ $ip == 192.0.2.* ]] || fail "$ctx: no 192.0.2.x address in the LoadBalancer Service's status within 2s (got '$ip')"
	say "$ctx: LoadBalancer Service bed-check got $ip within $((($(date +%s%N) - lb_start) / 1000000)) ms"
	ips+=("$ip")
done
[ "$(printf '%s\n' "${ranges[@]}" | sort -u | wc -l)" = "$N" ] || fail "service ranges are not distinct: ${ranges[*]}"
[ "$(printf '%s\n' "${ips[@]}" | sort -u | wc -l)" = "$N" ] || fail "load balancer addresses are not distinct: ${ips[*]}"
say "service ranges distinct: ${ranges[*]}; load balancer addresses distinct: ${ips[*]}"

# A zombie has exited (only its exit status waits for init to collect it), as down.sh counts it.
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
recorded=()
record() { # pid files under $state: remembered, to check later that each process is gone
	local f pid before=${#recorded[@]}
	for f in $(find "$state" -name '*.pid'); do
		read -r pid _ <"$f"
		recorded+=("$pid:$(basename "$f" .pid)")
	done
	say "$((${#recorded[@]} - before)) pid files: ${recorded[*]:$before}"
}
none_running() { # what: every recorded process has exited
	local r pid
	for r in "${recorded[@]}"; do
		pid=${r%%:*}
		! running "$pid" || fail "$1: ${r#*:} (pid $pid) still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	done
}
record

# A second cluster-up with another size replaces the first: one cluster, as ever.
start=$SECONDS
make -s cluster-up >/dev/null 2>&1
say "make cluster-up (CLUSTERS=1) over the bed of $N: $((SECONDS - start))s"
none_running "after the replacing cluster-up"
[ ! -e "$state/cluster-1" ] || fail "$state/cluster-1 survived the replacing cluster-up"
say "single cluster: context $(kubectl config current-context), nodes: $(kubectl get nodes -o name | tr '\n' ' ')"
record

start=$SECONDS
make -s cluster-down 2>/dev/null
say "make cluster-down: $((SECONDS - start))s"
left=$(find "$clone" -path "$clone/.git" -prune -o -name '*.pid' -print)
[ -z "$left" ] || fail "pid files left: $left"
[ ! -e "$state" ] || fail "$state is still there"
none_running "after cluster-down"
procs=$(ps -eo pid=,args= | grep -F "$state" | grep -v grep || true)
[ -z "$procs" ] || fail "processes still name $state: $procs"
say "after cluster-down: no pid file, none of the ${#recorded[@]} recorded processes runs, no process names $state"
say "PASS"

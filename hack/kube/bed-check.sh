#!/usr/bin/env bash
# Checks the multi-cluster test bed end to end, from a fresh clone of this checkout's HEAD:
# `make cluster-up CLUSTERS=N` (3); every context answers `kubectl get nodes` with Ready
# kwok nodes; the service ranges differ; a LoadBalancer Service in each cluster gets a
# distinct 192.0.2.x address; `make cluster-down` leaves no pid file and no process of any
# cluster. Prints what it sees; exits non-zero on the first failed check.
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

pidfiles=("$state"/cluster-*/pids/*.pid)
recorded=()
for f in "${pidfiles[@]}"; do read -r pid exe <"$f"; recorded+=("$pid:$(basename "$f" .pid)"); done
say "${#pidfiles[@]} pid files before cluster-down: ${recorded[*]}"
start=$SECONDS
make -s cluster-down 2>/dev/null
say "make cluster-down: $((SECONDS - start))s"
left=$(find "$clone" -path "$clone/.git" -prune -o -name '*.pid' -print)
[ -z "$left" ] || fail "pid files left: $left"
[ ! -e "$state" ] || fail "$state is still there"
# A zombie has exited (only its exit status waits for init to collect it), as down.sh counts it.
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
for r in "${recorded[@]}"; do
	pid=${r%%:*}
	! running "$pid" || fail "${r#*:} (pid $pid) still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done
procs=$(ps -eo pid=,args= | grep -F "$state" | grep -v grep || true)
[ -z "$procs" ] || fail "processes still name $state: $procs"
say "after cluster-down: no pid file, none of the ${#recorded[@]} recorded pids exists, no process names $state"
say "PASS"

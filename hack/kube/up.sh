#!/usr/bin/env bash
# Starts a local Kubernetes control plane for tests and the demo: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok with NODES fake nodes, every component
# on 127.0.0.1, with a fresh PKI and kubeconfig in $STATE. Prints the exports to use it.
#
# Knobs: STATE (default ./.cluster), PORT_BASE (default: first free block from 26000),
# NODES (2), BIN (./bin), SERVICE_CIDR, POD_CIDR, NODE_IP_PREFIX, UP_TIMEOUT (seconds, 90),
# BED_INDEX (cluster i of a bed, 1-8: names cluster-i, service range 127.(63+i).0.0/16 and
# fakelb), FAKE_LB (1: run fakelb; default 1 in a bed, else 0), REAL_ISTIOD (1, the default:
# realistiod runs a real istiod for every istiod pod an install creates; 0: kwok fakes them),
# KCM_QPS (200: the controller-manager's requests per second to the apiserver; its default
# of 20 made every Deployment rollout wait on it: ~8 writes each, 4 s for 10 rollouts).
# Stop it with down.sh (same STATE).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${BIN:-$root/bin}
STATE=${STATE:-$root/.cluster}
NODES=${NODES:-2}
log() { printf '[cluster-up] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The members of a bed (make cluster-up CLUSTERS=N, pkg/testing/cluster's beds) differ in
# everything two clusters of one mesh must not share: kubeconfig names, service range
# (so ClusterIPs never collide) and fake load balancer addresses. The rules live here only.
BED_INDEX=${BED_INDEX:-}
if [ -n "$BED_INDEX" ]; then
	[[ $BED_INDEX =~ ^[1-8]$ ]] || die "BED_INDEX=$BED_INDEX: a bed has clusters 1 to 8"
	CONTEXT=cluster-$BED_INDEX KUBE_USER=cluster-$BED_INDEX-admin
	SERVICE_CIDR=${SERVICE_CIDR:-127.$((63 + BED_INDEX)).0.0/16}
	FAKE_LB=${FAKE_LB:-1}
else
	CONTEXT=istioctl-local KUBE_USER=admin
fi
# fakelb writes LoadBalancer addresses from 192.0.2.0/24 (TEST-NET-1, never dialled) into
# Service status: cluster i of a bed gets 192.0.2.(32i-31) to 192.0.2.(32i-2).
FAKE_LB=${FAKE_LB:-0}
lb_first=$((32 * (${BED_INDEX:-1} - 1) + 1))
LB_POOL=192.0.2.$lb_first-192.0.2.$((lb_first + 29))
# Fake addresses that nothing may ever dial.
POD_CIDR=${POD_CIDR:-10.244.0.0/16}
NODE_IP_PREFIX=${NODE_IP_PREFIX:-10.255.0.}
UP_TIMEOUT=${UP_TIMEOUT:-90}
REAL_ISTIOD=${REAL_ISTIOD:-1}
KCM_QPS=${KCM_QPS:-200}
[[ $REAL_ISTIOD =~ ^[01]$ ]] || die "REAL_ISTIOD=$REAL_ISTIOD: 1 (run a real istiod) or 0"

bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages.yaml)
[ "$FAKE_LB" != 1 ] || bins+=(fakelb)
[ "$REAL_ISTIOD" != 1 ] || bins+=(realistiod pilot-discovery kwok-crds.yaml)
for b in "${bins[@]}"; do
	[ -e "$BIN/$b" ] || die "$BIN/$b is missing: run 'make cluster-bin' (hack/kube/build.sh) first"
done
command -v openssl >/dev/null || die "openssl is needed to make the cluster's certificates"

if [ -f "$STATE/pids/kube-apiserver.pid" ]; then
	die "a cluster already runs with state $STATE: stop it with 'make cluster-down' (or STATE=$STATE hack/kube/down.sh)"
fi

# Clusters started at the same time (a bed, or one per test binary under a plain go test
# ./...) would race for the same free ports. Under a short lock each chooses a block and
# reserves it with a file naming this script's pid; the reservation lapses when the script
# ends, by when its ports are bound (or it failed and freed them). So starts run in parallel.
locked=
if [ -z "${CLUSTER_UP_LOCKED:-}" ] && command -v flock >/dev/null; then
	exec 9>"${TMPDIR:-/tmp}/istioctl-cluster-up.lock"
	flock 9
	locked=1
fi
reservations=${TMPDIR:-/tmp}/istioctl-cluster-ports
mkdir -p "$reservations"
reserved() { # block: another live up.sh holds it
	local pid
	read -r pid 2>/dev/null <"$reservations/$1" || return 1
	[ "$pid" != $$ ] && kill -0 "$pid" 2>/dev/null
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
block_free() {
	local b=$1 off
	! reserved "$b" || return 1
	for off in 379 380 443 257 259 247; do port_free $((b + off)) || return 1; done
}
if [ -n "${PORT_BASE:-}" ]; then
	block_free "$PORT_BASE" || die "a port of block $PORT_BASE (+379,+380,+443,+257,+259,+247) is in use"
else
	PORT_BASE=26000
	until block_free $PORT_BASE; do
		PORT_BASE=$((PORT_BASE + 1000))
		# Blocks end below 45000: make test's sandbox hands out ephemeral ports from there up
		# (hack/test.sh), so a client's port never lands in a cluster's block.
		[ $PORT_BASE -lt 45000 ] || die "no free port block found between 26000 and 45000"
	done
fi
# Loopback on purpose: the apiserver calls webhooks at the Service's ClusterIP, and a
# loopback address keeps such a call on this host (it fails fast when nothing serves it).
# Every cluster that can run beside another has a range of its own, since a ClusterIP is
# an address on this host: a bed's member its index's (127.64-127.71), any other cluster
# its port block's (127.72 for block 26000, up to 127.90 for 44000).
SERVICE_CIDR=${SERVICE_CIDR:-127.$((72 + (PORT_BASE - 26000) / 1000)).0.0/16}
ETCD_PORT=$((PORT_BASE + 379)) ETCD_PEER_PORT=$((PORT_BASE + 380)) API_PORT=$((PORT_BASE + 443))
KCM_PORT=$((PORT_BASE + 257)) SCHED_PORT=$((PORT_BASE + 259)) KWOK_PORT=$((PORT_BASE + 247))
echo $$ >"$reservations/$PORT_BASE"
trap '[ "$(cat "$reservations/$PORT_BASE" 2>/dev/null)" != $$ ] || rm -f "$reservations/$PORT_BASE"' EXIT
[ -z "$locked" ] || exec 9>&-
FIRST_SERVICE_IP=$(echo "$SERVICE_CIDR" | awk -F'[./]' '{print $1"."$2"."$3"."$4+1}')

mkdir -p "$STATE"/{pki,pids,logs,etcd,flexvolume,kubecache}
STATE=$(cd "$STATE" && pwd)
PKI=$STATE/pki
started=$SECONDS

# --- PKI -----------------------------------------------------------------------------
cert() { # name subject [san] : a key and a cert signed by the cluster CA
	local name=$1 subj=$2 san=${3:-}
	openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
	openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
	local ext="$PKI/$name.ext"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$san" ] || echo "subjectAltName=$san"
	} >"$ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 365 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
	rm -f "$PKI/$name.csr" "$ext"
}
openssl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
	-subj "/CN=$CONTEXT-ca" -days 365 -sha256 2>/dev/null
cert apiserver "/CN=kube-apiserver" \
	"IP:127.0.0.1,IP:::1,IP:$FIRST_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin "/O=system:masters/CN=kubernetes-admin"
cert kwok "/CN=kwok" "DNS:localhost,IP:127.0.0.1"
cert front-proxy-client "/CN=front-proxy-client"
openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null

KUBECONFIG_FILE=$STATE/kubeconfig
b64() { base64 -w0 <"$1"; }
cat >"$KUBECONFIG_FILE" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: $CONTEXT
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $KUBE_USER
  user:
    client-certificate-data: $(b64 "$PKI/admin.crt")
    client-key-data: $(b64 "$PKI/admin.key")
contexts:
- name: $CONTEXT
  context: {cluster: $CONTEXT, user: $KUBE_USER}
current-context: $CONTEXT
KCFG
chmod 600 "$KUBECONFIG_FILE"
K=$KUBECONFIG_FILE
export KUBECACHEDIR=$STATE/kubecache
kubectl() { "$BIN/kubectl" --kubeconfig "$K" --cache-dir "$KUBECACHEDIR" "$@"; }

# --- processes -----------------------------------------------------------------------
start() { # name args... : runs $BIN/name in the background, recording pid and binary
	local name=$1; shift
	local exe; exe=$(readlink -f "$BIN/$name")
	# 9>&-: the component must not inherit (and so keep holding) the start-up lock.
	nohup "$exe" "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null 9>&- &
	echo "$! $exe" >"$STATE/pids/$name.pid"
}
alive() { local pid; read -r pid _ <"$STATE/pids/$1.pid"; kill -0 "$pid" 2>/dev/null; }
fail() { # name message: print the component's log tail, stop what we started, exit
	log "ERROR: $2"
	log "last lines of $STATE/logs/$1.log:"
	tail -n 30 "$STATE/logs/$1.log" >&2 || true
	KEEP_STATE=1 STATE=$STATE "$here/down.sh" >&2 || true
	exit 1
}
wait_for() { # name description command... : polls until the command succeeds
	local name=$1 what=$2; shift 2
	local deadline=$((SECONDS + UP_TIMEOUT)) n
	until "$@" >/dev/null 2>&1; do
		for n in "$STATE"/pids/*.pid; do
			n=$(basename "$n" .pid)
			alive "$n" || fail "$n" "$n exited while waiting for $what"
		done
		[ $SECONDS -lt $deadline ] || fail "$name" "timed out after ${UP_TIMEOUT}s waiting for $what"
		sleep 0.2
	done
}

# etcd reads every ETCD_* variable as a flag: start it with a clean environment for those.
for v in $(env | awk -F= '/^ETCD_/{print $1}'); do unset "$v"; done
start etcd --name=kube --data-dir="$STATE/etcd" \
	--listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster="kube=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state=new \
	--unsafe-no-fsync=true --auto-compaction-retention=1 --quota-backend-bytes=4294967296 --log-level=warn
wait_for etcd "etcd to be healthy" curl -sf "http://127.0.0.1:$ETCD_PORT/health"

# Every write request, with who sent it, for the tests that prove what a command wrote
# (writes by ServiceAccounts, istiod's, are told apart from the admin's).
cat >"$STATE/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: None
  verbs: [get, list, watch]
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}, {group: "", resources: [events, pods/status, nodes/status]}]
- level: Metadata
POLICY
start kube-apiserver --bind-address=127.0.0.1 \
	--audit-policy-file="$STATE/audit-policy.yaml" --audit-log-path="$STATE/logs/audit.log" --audit-log-maxsize=0 --secure-port="$API_PORT" --advertise-address=127.0.0.1 \
	--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
	--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
	--service-cluster-ip-range="$SERVICE_CIDR" --authorization-mode=Node,RBAC \
	--enable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
	--allow-privileged=true \
	--kubelet-preferred-address-types=Hostname --kubelet-certificate-authority="$PKI/ca.crt" \
	--kubelet-client-certificate="$PKI/admin.crt" --kubelet-client-key="$PKI/admin.key" \
	--endpoint-reconciler-type=none \
	--requestheader-client-ca-file="$PKI/ca.crt" --requestheader-allowed-names=front-proxy-client \
	--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
	--requestheader-extra-headers-prefix=X-Remote-Extra- \
	--proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
	--profiling=false --v=1
wait_for kube-apiserver "kube-apiserver /readyz" curl -sf --cacert "$PKI/ca.crt" "https://127.0.0.1:$API_PORT/readyz"

start kube-controller-manager --kubeconfig="$K" --authentication-kubeconfig="$K" --authorization-kubeconfig="$K" \
	--bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
	--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
	--use-service-account-credentials=false --service-cluster-ip-range="$SERVICE_CIDR" \
	--requestheader-client-ca-file="$PKI/ca.crt" \
	--node-monitor-grace-period=50s --flex-volume-plugin-dir="$STATE/flexvolume" \
	--kube-api-qps="$KCM_QPS" --kube-api-burst="$((KCM_QPS * 2))" --v=1
start kube-scheduler --kubeconfig="$K" --authentication-kubeconfig="$K" --authorization-kubeconfig="$K" \
	--bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false \
	--requestheader-client-ca-file="$PKI/ca.crt" --v=1
stages=$BIN/kwok-stages.yaml kwok_crds=()
if [ "$REAL_ISTIOD" = 1 ]; then
	# istiod's pods start not ready (realistiod marks them ready while istiod answers), and
	# kwok's Logs and PortForward objects let `kubectl logs` and port-forward reach it.
	stages=$STATE/kwok-stages.yaml
	"$BIN/realistiod" stages "$BIN/kwok-stages.yaml" >"$stages" || die "realistiod could not write the kwok stages"
	kubectl apply -f "$BIN/kwok-crds.yaml" >/dev/null
	wait_for kube-apiserver "kwok's CRDs" kubectl wait --for=condition=Established --timeout=1s \
		crd/logs.kwok.x-k8s.io crd/portforwards.kwok.x-k8s.io
	kwok_crds=(--enable-crds=Logs,PortForward)
fi
start kwok --kubeconfig="$K" --config="$stages" --manage-all-nodes=true "${kwok_crds[@]}" \
	--cidr="$POD_CIDR" --node-name=localhost --node-port="$KWOK_PORT" --server-address="127.0.0.1:$KWOK_PORT" \
	--tls-cert-file="$PKI/kwok.crt" --tls-private-key-file="$PKI/kwok.key" --node-lease-duration-seconds=40
if [ "$FAKE_LB" = 1 ]; then
	rm -f "$STATE/fakelb.ready"
	start fakelb -kubeconfig="$K" -pool="$LB_POOL" -ready-file="$STATE/fakelb.ready"
fi
if [ "$REAL_ISTIOD" = 1 ]; then
	rm -f "$STATE/realistiod.ready"
	# istiods listen on the block's upper half: ports the kernel hands out (the ephemeral
	# range) can be taken by any client's connection before istiod binds them.
	start realistiod -kubeconfig="$K" -binary="$(readlink -f "$BIN/pilot-discovery")" \
		-state="$STATE/realistiod" -ready-file="$STATE/realistiod.ready" \
		-ports="$((PORT_BASE + 500))-$((PORT_BASE + 999))"
fi
wait_for kube-controller-manager "kube-controller-manager /healthz" curl -sfk "https://127.0.0.1:$KCM_PORT/healthz"
wait_for kube-scheduler "kube-scheduler /healthz" curl -sfk "https://127.0.0.1:$SCHED_PORT/healthz"

# --- fake nodes ----------------------------------------------------------------------
{
	for i in $(seq 0 $((NODES - 1))); do
		cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {type: kwok, kubernetes.io/os: linux, kubernetes.io/arch: amd64, kubernetes.io/hostname: kwok-node-$i}
status:
  addresses: [{type: InternalIP, address: "$NODE_IP_PREFIX$((i + 1))"}, {type: Hostname, address: localhost}]
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
NODE
	done
} >"$STATE/nodes.yaml"
wait_for kube-apiserver "the node objects to be created" kubectl apply -f "$STATE/nodes.yaml"
nodes_ready() { kubectl wait --for=condition=Ready node --all --timeout=1s; }
wait_for kwok "$NODES kwok nodes to be Ready" nodes_ready
wait_for kube-controller-manager "the default ServiceAccount" kubectl -n default get serviceaccount default
[ "$FAKE_LB" != 1 ] || wait_for fakelb "fakelb to watch Services" test -f "$STATE/fakelb.ready"
[ "$REAL_ISTIOD" != 1 ] || wait_for realistiod "realistiod to watch pods" test -f "$STATE/realistiod.ready"

# A test binary that dies without stopping its cluster (a test timeout panics) would leave
# it running: with CLUSTER_OWNER_PID set, a watchdog stops the cluster when that process ends.
if [ -n "${CLUSTER_OWNER_PID:-}" ]; then
	nohup bash -c 'while kill -0 "$0" 2>/dev/null && [ -d "$1/pids" ]; do sleep 1; done; [ ! -d "$1/pids" ] || STATE="$1" "$2"' \
		"$CLUSTER_OWNER_PID" "$STATE" "$here/down.sh" >"$STATE/logs/watchdog.log" 2>&1 </dev/null 9>&- &
fi

cat >"$STATE/env" <<ENV
export KUBECONFIG=$KUBECONFIG_FILE
export KUBECACHEDIR=$KUBECACHEDIR
ENV
lb_note=
[ "$FAKE_LB" != 1 ] || lb_note=", LoadBalancer addresses $LB_POOL"
[ "$REAL_ISTIOD" != 1 ] || lb_note="$lb_note, real istiod"
log "cluster $CONTEXT up in $((SECONDS - started))s: apiserver https://127.0.0.1:$API_PORT, services $SERVICE_CIDR, $NODES kwok nodes$lb_note, state in $STATE"
cat "$STATE/env"

#!/usr/bin/env bash
# The README's main job (make demo): start the local cluster (if it is not running), install
# the default profile into it, verify the install, and say how to use and stop it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
. "$root/hack/lib.sh"
export STATE=${CLUSTER_STATE:-$root/.cluster}
ISTIOCTL=$root/bin/istioctl
log_tag=demo

if [ -f "$STATE/env" ] && KUBECONFIG=$STATE/kubeconfig "$root/bin/kubectl" get --raw /readyz >/dev/null 2>&1; then
	log "the local cluster is already running (state in $STATE)"
else
	[ ! -d "$STATE/pids" ] || "$here/kube/down.sh"
	"$here/kube/up.sh" >/dev/null
fi
# shellcheck disable=SC1091
source "$STATE/env"

"$ISTIOCTL" version
"$ISTIOCTL" x precheck
"$ISTIOCTL" install -y
"$ISTIOCTL" verify-install

cat <<MSG

The local cluster is up. To use it from this shell:
  source $STATE/env        # sets KUBECONFIG and KUBECACHEDIR
  bin/kubectl get nodes
  bin/istioctl version
To stop it and remove its state:
  make cluster-down
MSG

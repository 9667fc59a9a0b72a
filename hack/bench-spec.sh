#!/usr/bin/env bash
# Spec resolution cost, ours against upstream istioctl master, alternating in one run:
# our `profile dump demo` against upstream's `manifest generate --set profile=empty`
# (upstream's cost of resolving a spec and rendering nothing). Installs upstream into
# bin/upstream/ once (about 20 minutes cold) and reuses it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/hack/upstream.env"
RUNS=${RUNS:-20}

UPSTREAM=$("$root/hack/upstream-istioctl.sh")
[ -x bin/istioctl ] || make build
go build -o bin/benchcmp ./hack/benchcmp

# Offline and with a throwaway HOME: neither side may reach a cluster or a user's config.
export HOME=$(mktemp -d) KUBECONFIG=/nonexistent
echo "Machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $RUNS alternating runs each" >&2
bin/benchcmp -n "$RUNS" \
	"ours: profile dump demo" bin/istioctl profile dump demo \
	::: "upstream: manifest generate --set profile=empty" "$UPSTREAM" manifest generate --set profile=empty

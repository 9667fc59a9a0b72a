#!/usr/bin/env bash
# Spec resolution cost, ours against upstream istioctl master, alternating in one run:
# our `profile dump demo` against upstream's `manifest generate --set profile=empty`
# (upstream's cost of resolving a spec and rendering nothing). Installs upstream into
# bin/upstream/ once (about 20 minutes cold) and reuses it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
UPSTREAM_VERSION=v0.0.0-20260827124520-eed52ebb66ad
UPSTREAM=$root/bin/upstream/istioctl
RUNS=${RUNS:-20}

if [ ! -x "$UPSTREAM" ] || [ "$(cat "$root/bin/upstream/VERSION" 2>/dev/null)" != "$UPSTREAM_VERSION" ]; then
	echo "[bench] installing upstream istioctl $UPSTREAM_VERSION into bin/upstream (once; about 20 minutes cold)" >&2
	mkdir -p "$root/bin/upstream"
	# Outside our module, so its requirements never touch our go.mod.
	(cd "$(mktemp -d)" && GOBIN="$root/bin/upstream" GOFLAGS=-mod=mod \
		go install "istio.io/istio/istioctl/cmd/istioctl@$UPSTREAM_VERSION")
	echo "$UPSTREAM_VERSION" >"$root/bin/upstream/VERSION"
fi
[ -x bin/istioctl ] || make build
go build -o bin/benchcmp ./hack/benchcmp

# Offline and with a throwaway HOME: neither side may reach a cluster or a user's config.
export HOME=$(mktemp -d) KUBECONFIG=/nonexistent
echo "Machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $RUNS alternating runs each" >&2
bin/benchcmp -n "$RUNS" \
	"ours: profile dump demo" bin/istioctl profile dump demo \
	::: "upstream: manifest generate --set profile=empty" "$UPSTREAM" manifest generate --set profile=empty

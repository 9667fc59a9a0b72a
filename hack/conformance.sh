#!/usr/bin/env bash
# make conformance: the differential test against upstream istioctl. Runs upstream's and our
# `manifest generate` on every case of testdata/conformance, compares verdicts, objects and
# fingerprints, re-records upstream's results (testdata/conformance/upstream.json, which
# `make test` compares ours with) and writes docs/conformance.md. Installs upstream istioctl
# at the version hack/bench.sh pins into bin/upstream once (~20 minutes cold).
# CONFORMANCE_CACHE=DIR keeps upstream's results between runs; CONFORMANCE_RUN=REGEXP runs
# only the matching cases (and records and reports nothing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
UPSTREAM_VERSION=$(sed -n 's/^UPSTREAM_VERSION=//p' hack/bench.sh)
[ -n "$UPSTREAM_VERSION" ] || { echo "[conformance] no UPSTREAM_VERSION in hack/bench.sh" >&2; exit 1; }
UPSTREAM=$root/bin/upstream/istioctl
if [ ! -x "$UPSTREAM" ] || [ "$(cat "$root/bin/upstream/VERSION" 2>/dev/null)" != "$UPSTREAM_VERSION" ]; then
	echo "[conformance] installing upstream istioctl $UPSTREAM_VERSION into bin/upstream (once; ~20 minutes cold)" >&2
	mkdir -p "$root/bin/upstream"
	# Outside our module, so its requirements never touch our go.mod.
	(cd "$(mktemp -d)" && GOBIN="$root/bin/upstream" GOFLAGS=-mod=mod \
		go install "istio.io/istio/istioctl/cmd/istioctl@$UPSTREAM_VERSION")
	echo "$UPSTREAM_VERSION" >"$root/bin/upstream/VERSION"
fi
go build -o bin/conformance ./hack/conformance
bin/conformance -upstream "$UPSTREAM" -upstream-version "$UPSTREAM_VERSION" \
	${CONFORMANCE_CACHE:+-cache "$CONFORMANCE_CACHE"} ${CONFORMANCE_RUN:+-run "$CONFORMANCE_RUN"}

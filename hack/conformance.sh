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
. "$root/hack/upstream.env"
UPSTREAM=$("$root/hack/upstream-istioctl.sh")
go build -o bin/conformance ./hack/conformance
bin/conformance -upstream "$UPSTREAM" -upstream-version "$UPSTREAM_VERSION" \
	${CONFORMANCE_CACHE:+-cache "$CONFORMANCE_CACHE"} ${CONFORMANCE_RUN:+-run "$CONFORMANCE_RUN"}

#!/usr/bin/env bash
# Prints the version line: the Istio version this tree installs and reports, which is the
# version of the istio.io/api module go.mod pins (without its v). Everything else that names
# it (charts, image tags, pkg/version, the benchmarks' upstream flags) derives from it.
set -euo pipefail
awk '$1 == "istio.io/api" { sub(/^v/, "", $2); print $2; found = 1 } END { exit !found }' "$(dirname "$0")/../go.mod"

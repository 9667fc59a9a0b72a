#!/usr/bin/env bash
# Stamps the version line (hack/istio-version.sh, from go.mod) where files must spell it out
# (run by make generate): every chart's version and appVersion, the image tags of the charts'
# values and of the default profile, and pkg/version's default. manifests/version_test.go
# fails when one of them drifts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
v=$(hack/istio-version.sh)
semver='[0-9]+\.[0-9]+\.[0-9]+'
for f in manifests/charts/*/Chart.yaml manifests/charts/*/*/Chart.yaml; do
	sed -i -E "s/^(version|appVersion): $semver\$/\1: $v/" "$f"
done
for f in manifests/charts/*/values.yaml manifests/charts/*/*/values.yaml; do
	sed -i -E "s/^( *tag: )$semver\$/\1$v/" "$f"
done
sed -i -E "s/^(  tag: )\"$semver\"\$/\1\"$v\"/" profiles/default.yaml
sed -i -E "s/^(\tVersion = )\"$semver\"/\1\"$v\"/" pkg/version/version.go

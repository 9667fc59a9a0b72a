#!/usr/bin/env bash
# Copies manifests/helm-profiles/*.yaml into each chart's files/ as profile-<name>.json (run by
# make generate): one source, and every chart stays usable with plain Helm. The copies are JSON
# (hack/profilejson), which the charts read with fromJson: fromYaml costs a render five times
# the memory, for every chart.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/profilejson" ./hack/profilejson)
cd "$root/manifests"
for f in helm-profiles/*.yaml; do
	"$work/profilejson" "$f" >"$work/$(basename "$f" .yaml).json"
done
for chart in charts/*/Chart.yaml charts/*/*/Chart.yaml; do
	[ -e "$chart" ] || continue
	dir=$(dirname "$chart")
	mkdir -p "$dir/files"
	rm -f "$dir"/files/profile-*.yaml "$dir"/files/profile-*.json
	for f in "$work"/*.json; do
		cp "$f" "$dir/files/profile-$(basename "$f")"
	done
done

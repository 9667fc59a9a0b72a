#!/usr/bin/env bash
# Copies manifests/helm-profiles/*.yaml into each chart's files/ as profile-<name>.yaml (run by
# make generate): one source, and every chart stays usable with plain Helm.
set -euo pipefail
cd "$(dirname "$0")/../manifests"
for chart in charts/*/Chart.yaml charts/*/*/Chart.yaml; do
	[ -e "$chart" ] || continue
	dir=$(dirname "$chart")
	mkdir -p "$dir/files"
	for f in helm-profiles/*.yaml; do
		{
			echo "# Copied from manifests/helm-profiles/$(basename "$f") by make generate. DO NOT EDIT."
			cat "$f"
		} >"$dir/files/profile-$(basename "$f")"
	done
done

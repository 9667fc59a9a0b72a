#!/usr/bin/env bash
# Runs every fuzz target for the given time each (default 2m): `make fuzz` runs them long,
# `make test` briefly. A crasher is written under the package's testdata/fuzz/ by go test;
# commit it: it becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-2m}
targets=(
	"./operator/spec FuzzSetFlag"
	"./operator/spec FuzzResolveFile"
	"./operator/api/v1alpha1 FuzzDecodeFile"
	"./operator/render FuzzOverlayPatch"
)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "[fuzz] $name ($pkg) for $time" >&2
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$time" "$pkg"
done

#!/usr/bin/env bash
# Records the flags upstream istioctl master's --help lists for the commands this tool
# shares with it, into testdata/upstream-flags.txt: one "<command> --<flag> [-<short>]" a
# line ("global" for the root's), and its other names as "<command> @<alias>". pkg/cmd's
# TestUpstreamFlags checks ours accepts each. It also records `version --remote=false` in
# each form and format into testdata/version/ (TestVersionClientOnly compares the shapes).
# Needs bin/upstream/istioctl (hack/upstream-istioctl.sh); runs offline.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
UPSTREAM=$root/bin/upstream/istioctl
[ -x "$UPSTREAM" ] || { echo "bin/upstream/istioctl is missing: run hack/upstream-istioctl.sh once" >&2; exit 1; }
HOME=$(mktemp -d)
export HOME KUBECONFIG=/nonexistent
# flags NAME ARGS...: the "Flags:" section of `istioctl ARGS --help`, as NAME's lines.
flags() {
	local name=$1; shift
	"$UPSTREAM" "$@" --help | awk -v cmd="$name" '
		/^Flags:/ { on = 1; next }
		/^Aliases:/ { al = 1; next }
		/^[^ ]/ { on = 0; al = 0 }
		al && NF { n = split($0, a, /[ ,]+/); for (i = 2; i <= n; i++) if (a[i] != a[2]) print cmd " @" a[i]; al = 0 }
		on && match($0, /^ +(-[a-zA-Z], )?--[a-zA-Z0-9-]+/) {
			f = substr($0, RSTART, RLENGTH); gsub(/^ +/, "", f)
			n = split(f, p, ", ")
			if (p[n] == "--help") next
			print cmd " " p[n] (n == 2 ? " " p[1] : "")
		}'
}
{
	echo "# upstream istioctl $(cat bin/upstream/VERSION 2>/dev/null || echo '?'): written by hack/upstream-flags.sh"
	flags global
	for c in install upgrade uninstall "manifest generate" "manifest install" "x precheck" \
		"tag set" "tag generate" "tag list" "tag remove" version create-remote-secret remote-clusters; do
		# shellcheck disable=SC2086 # the command's words
		flags "$c" $c
	done
} >testdata/upstream-flags.txt
echo testdata/upstream-flags.txt >&2
mkdir -p testdata/version
for f in "short:" "long:--short=false" "json:-o json" "yaml:-o yaml"; do
	# shellcheck disable=SC2086 # the flags' words
	"$UPSTREAM" version --remote=false ${f#*:} >"testdata/version/${f%%:*}.txt"
done
echo testdata/version/ >&2

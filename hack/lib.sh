# shellcheck shell=bash
# The shell helpers the bench and demo scripts share; they source it after cd-ing to the root:
#   . "$root/hack/lib.sh"
# Only definitions: sourcing it runs nothing.

# now_ms: the wall clock in milliseconds.
now_ms() { date +%s%3N; }

# med NUMBERS...: their median (the lower middle one of an even count), as given.
# Callers holding a space-separated list pass it unquoted: med ${wall[ours]}.
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# stats NUMBERS...: "median (min-max)", as given.
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%s (%s-%s)", a[int((NR+1)/2)], a[1], a[NR]}'; }

# log MESSAGE...: "[$log_tag] MESSAGE" on stderr; the sourcing script sets log_tag.
log() { printf '[%s] %s\n' "${log_tag:?log_tag is not set}" "$*" >&2; }

#!/bin/sh
# go-warm.sh NAME DIR COMMAND...: compile ahead into Go's build cache (GOCACHE), from DIR, best effort.
# templates/Dockerfile.j2 runs it in JSON form (the command's packages and flags are arguments,
# never shell text): `go build std`, or `go test -count=1 -exec /bin/true ...` (test binaries built,
# vetted and linked, never run). A package that does not compile stays cold: the build goes on and
# the attempts fail as recorded. What came of it is written to /opt/replay/warm/go-NAME, read back
# by replay as a fidelity row.
set -u
name=$1; dir=$2; shift 2
dir_out=${REPLAY_WARM_DIR:-/opt/replay/warm}  # set by the tests only
mkdir -p "$dir_out"
out=$dir_out/go-$name
cd "$dir" || { echo "failed 0s 0" > "$out"; exit 0; }
start=$(date +%s)
log=$(mktemp)
if "$@" > "$log" 2>&1; then status=ok; else status=failed; fi
# `go test` says one line per package: ok, FAIL (with why), or "?" (no test files)
lines=$(grep -cE '^(ok|\?) ' "$log" || true)
failed=$(grep -E '^FAIL[[:space:]]' "$log" | sed -E 's/^FAIL[[:space:]]+//; s/[[:space:]]+/ /g' | head -n 20 || true)
{
    echo "$status $(( $(date +%s) - start ))s $lines"
    [ -n "$failed" ] && echo "$failed"
} > "$out"
if [ "$status" = failed ]; then
    echo "replay: compiling ahead ($name) failed; what did not compile stays cold:" >&2
    tail -n 15 "$log" >&2
fi
rm -f "$log"
exit 0

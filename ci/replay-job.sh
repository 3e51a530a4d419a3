#!/usr/bin/env bash
# The CI job that replays a capsule attached to a failing job (ci/github/action.yml,
# ci/gitlab/replay.gitlab-ci.yml call it; the runner image has it on PATH).
#
#   replay-job.sh [CAPSULE [GOOD]]
#
# CAPSULE and GOOD are paths or http(s) URLs; settings come from the environment, so CI
# inputs never become shell text:
#   REPLAY_CAPSULE   the failing run's capsule (or the first argument)
#   REPLAY_GOOD      a passing run's capsule: also bisect the difference (or the second argument)
#   REPLAY_REPO      a clone, fork or mirror of the capsule's repository (--repo)
#   REPLAY_REPO_URL  how the report's "reproduce here" line names that repository (--repo-url):
#                    default the CI's own (GitLab's CI_PROJECT_URL, GitHub's GITHUB_SERVER_URL/
#                    GITHUB_REPOSITORY), never the job's path inside its container
#   REPLAY_OUT       where the results go (default replay-out): replay.xml (JUnit), replay.html,
#                    farm-run.json, and with GOOD bisect.json
#   REPLAY_FARM_DB   the history (a shared database); default a job-local OUT/farm.sqlite
#   REPLAY_ATTEMPTS  attempts per capsule (default 3)
#   GITHUB_STEP_SUMMARY  where GitHub shows a step's summary: the verdict sentence and the
#                    fidelity summary are appended to it (and always written to OUT/summary.md)
# Exit: farm run's (0 every capsule got a verdict, whatever it is, or is broken; 1 the
# capsule is broken: no verdict; 2 bad input, or no capsule found; 3 a capsule ended
# infra-error: the environment failed); a bisect that finds nothing does not fail the job, one that cannot run does.
set -euo pipefail

capsule=${1:-${REPLAY_CAPSULE:-}}
good=${2:-${REPLAY_GOOD:-}}
out=${REPLAY_OUT:-replay-out}
attempts=${REPLAY_ATTEMPTS:-3}
[ -n "$capsule" ] || { echo "replay-job: no capsule (set REPLAY_CAPSULE or pass it)" >&2; exit 2; }
case $attempts in (*[!0-9]*|'') echo "replay-job: REPLAY_ATTEMPTS=$attempts: not a number" >&2; exit 2;; esac
mkdir -p "$out/capsules"
export REPLAY_FARM_DB=${REPLAY_FARM_DB:-$out/farm.sqlite}

fetch() {  # a URL is downloaded into OUT/capsules (its name made safe); a path is used as is
    local src=$1 name
    case $src in
    http://*|https://*)
        name=$(basename "${src%%\?*}" | tr -c 'A-Za-z0-9._\n-' '_')
        curl -fsSL --retry 3 --max-filesize 33554432 -o "$out/capsules/$2-$name" -- "$src"
        printf '%s\n' "$out/capsules/$2-$name";;
    *) printf '%s\n' "$src";;
    esac
}

capsule=$(fetch "$capsule" bad)
repo_args=()
[ -z "${REPLAY_REPO:-}" ] || repo_args=(--repo "$REPLAY_REPO")
ci_url=${CI_PROJECT_URL:-}
[ -n "$ci_url" ] || [ -z "${GITHUB_REPOSITORY:-}" ] || ci_url="${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY"
repo_url=${REPLAY_REPO_URL:-$ci_url}
url_args=()
[ -z "${REPLAY_REPO:-}" ] || [ -z "$repo_url" ] || url_args=(--repo-url "$repo_url")

rc=0
replay farm run "$capsule" ${repo_args[@]+"${repo_args[@]}"} ${url_args[@]+"${url_args[@]}"} --attempts "$attempts" --json > "$out/farm-run.json" || rc=$?
replay farm report --junit "$out/replay.xml" --html "$out/replay.html" || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
replay ci summary "$capsule" "$out/farm-run.json" ${repo_args[@]+"${repo_args[@]}"} \
    --out "$out/summary.md" > /dev/null || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
if [ -s "$out/summary.md" ]; then
    cat "$out/summary.md" >&2  # the job log (GitLab shows no step summary)
    [ -z "${GITHUB_STEP_SUMMARY:-}" ] || cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi

if [ -n "$good" ]; then
    good=$(fetch "$good" good)
    b=0
    replay bisect "$capsule" --good "$good" ${repo_args[@]+"${repo_args[@]}"} --attempts "$attempts" --json \
        > "$out/bisect.json" || b=$?
    echo "replay-job: bisect exit $b (0 a culprit found, 1 none), see $out/bisect.json" >&2
    if [ "$b" -gt 1 ] && [ "$rc" -eq 0 ]; then rc=$b; fi
fi
echo "replay-job: results in $out (exit $rc)" >&2
exit "$rc"

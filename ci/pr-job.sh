#!/usr/bin/env bash
# The pull-request job: replay each capsule attached to the issues the PR closes at the
# PR's head, write one Markdown comment per capsule, post them (GitHub), and fail unless
# every capsule is fixed. ci/github/action.yml (mode: pull-request) and
# ci/gitlab/replay.gitlab-ci.yml call it; the runner image has it on PATH.
#
#   pr-job.sh [CAPSULE...]
#
# Settings from the environment (CI inputs never become shell text):
#   REPLAY_REF        the PR's head commit (required): each capsule is replayed there (--ref)
#   REPLAY_REPO       a clone of the repository holding REPLAY_REF (--repo), e.g. the job's checkout
#   REPLAY_OUT        where comments and reports go (default replay-out): comment-N.md, run-N.json
#   REPLAY_ATTEMPTS   exactly this many attempts per side (default: replay stops when decided,
#                     judging the fix against the recorded commit's rate; see docs/ci.md)
#   REPLAY_PR, GITHUB_REPOSITORY, GITHUB_TOKEN
#                     with no CAPSULE given, find the capsules on GitHub (replay ci find)
#   REPLAY_POST=1     post the comments on the PR (updating the ones an earlier run posted)
# Exit: 0 every capsule fixed; 1 one is not (still failing, different failure, flaky,
# inconclusive: too few runs to tell a fix from luck); 2 bad input; 3 the environment failed.
set -euo pipefail

ref=${REPLAY_REF:-}
out=${REPLAY_OUT:-replay-out}
attempts=${REPLAY_ATTEMPTS:-}
case $ref in (*[!0-9a-fA-F]*|'') echo "pr-job: REPLAY_REF=$ref: not a commit id" >&2; exit 2;; esac
case $attempts in (*[!0-9]*) echo "pr-job: REPLAY_ATTEMPTS=$attempts: not a number" >&2; exit 2;; esac
attempt_args=()
[ -z "$attempts" ] || attempt_args=(--attempts "$attempts")
mkdir -p "$out"

capsules=("$@")
if [ ${#capsules[@]} -eq 0 ]; then
    : "${REPLAY_PR:?pr-job: no capsule given and no REPLAY_PR to find them}"
    : "${GITHUB_REPOSITORY:?pr-job: GITHUB_REPOSITORY (OWNER/REPO) is needed to find capsules}"
    replay ci find --repo "$GITHUB_REPOSITORY" --pr "$REPLAY_PR" --out "$out/capsules" \
        > "$out/capsules.txt"  # exit 3 when GitHub does not answer: the job fails (set -e)
    mapfile -t capsules < "$out/capsules.txt"
fi
if [ ${#capsules[@]} -eq 0 ]; then
    echo "pr-job: no capsule attached to the issues this PR closes: nothing to check" >&2
    exit 0
fi
repo_args=()
[ -z "${REPLAY_REPO:-}" ] || repo_args=(--repo "$REPLAY_REPO")

rc=0 i=0 comments=()
for capsule in "${capsules[@]}"; do
    i=$((i + 1))
    comment="$out/comment-$i.md"
    r=0
    replay "$capsule" --ref "$ref" ${repo_args[@]+"${repo_args[@]}"} ${attempt_args[@]+"${attempt_args[@]}"} \
        --comment "$comment" --json > "$out/run-$i.json" || r=$?
    if [ ! -s "$comment" ]; then  # exit 2 or 3: no report, so no comment
        echo "pr-job: $capsule: replay could not judge it (exit $r); see $out/run-$i.json" >&2
        [ "$r" -ge 2 ] && rc=$r || rc=1
        continue
    fi
    comments+=("$comment")
    state=$(sed -n 's/^<!-- replay-ci capsule=[^ ]* state=\([a-z-]*\) -->$/\1/p' "$comment" | head -n 1)
    echo "pr-job: $capsule: $state (replay exit $r)" >&2
    # the comment's state is replay's own verdict (the one fix judgement, the recorded commit
    # first): the job fails exactly when replay says the capsule is not fixed
    if [ "$r" -ne 0 ] && [ "$rc" -eq 0 ]; then rc=$r; fi
done

if [ "${REPLAY_POST:-0}" = 1 ] && [ ${#comments[@]} -gt 0 ]; then
    : "${REPLAY_PR:?pr-job: REPLAY_POST=1 needs REPLAY_PR}"
    replay ci post --repo "${GITHUB_REPOSITORY:?}" --pr "$REPLAY_PR" "${comments[@]}"
fi
exit "$rc"

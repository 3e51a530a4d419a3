"""`replay bisect CAPSULE --commits --fixed-at COMMIT`: which commit after the recorded one made
the recorded failure go away (fix bisection, as syzbot's and ClusterFuzz's).

The walk (walk.py) is run mirrored: from FIXED_AT (its good end: the failure must be gone there)
back to the recorded commit (its bad end: the failure must come back there, its rate first).
The noise model is the walk's, mirrored with it: a recorded failure at a commit is sure evidence
the fix is not in it yet (it rules out every later first-fixed commit), a pass is weighed by the
failure's rate (a flaky failure passes by luck before its fix too). The first "bad" item the walk
finds is the last commit without the fix; the one after it in history, the fixing commit.
Every trial is the capsule's plan at that commit, without its recorded diff (made against the
recorded commit).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codec import encode
from ..errors import UsageError
from ..build.validate import is_valid
from .commits import Commit, History, at_commit, commit_of
from .resume import log_for
from ..verdict.judge import expected_of
from .trial import BisectSettings, LoaderLike, Observation, ProgressLike, ReplayerLike, Trials, end_of
from .walk import Chance, Walk, walk

FIX_MONOTONIC = "fix bisection assumes the fix, once in, stays in (monotonic), as git bisect does"


@dataclass(frozen=True)
class FixResult:
    walk: Walk  # mirrored: its good end is FIXED_AT, its bad end the recorded commit
    commits: tuple[Commit, ...]  # after the recorded commit up to FIXED_AT, oldest first
    recorded: str  # the capsule's commit, where the failure was recorded
    fix_candidates: tuple[Chance, ...] = ()  # the likeliest fixing commits first, with their probabilities

    @property
    def found(self) -> bool:
        return self.walk.found

    @property
    def fixing(self) -> Commit | None:
        """The first commit where the recorded failure is gone, once found."""
        if not self.walk.found:
            return None
        return next((c for c in self.commits if c.sha == self.walk.last_passing), None)


def fix_data(result: FixResult) -> dict[str, Any]:
    data: dict[str, Any] = encode(result)
    data["fixing"] = encode(result.fixing)
    return data


def find_fix(loader: LoaderLike, replayer: ReplayerLike, capsule: Path, fixed_at: str, settings: BisectSettings,
             progress: ProgressLike, history: History) -> FixResult:
    """The first commit after `capsule`'s where its recorded failure is gone, up to `fixed_at`
    (a commit id, full or abbreviated)."""
    if not is_valid("commit", fixed_at):
        raise UsageError(f"--fixed-at {fixed_at[:80]!r}: not a commit id (7 to 64 hex digits)")
    loaded, plan = loader.load(capsule)
    expected = expected_of(loaded)
    if not expected.failed:
        raise UsageError(f"{capsule}: the capsule recorded a pass; a fix is looked for of a recorded failure")
    expected = expected.along_history()  # some of the recorded failed tests failing: not fixed yet
    recorded = commit_of(capsule, plan)
    fixed_plan = at_commit(plan, fixed_at)
    assert fixed_plan.source is not None  # commit_of checked it
    if not fixed_plan.source.remote:
        raise UsageError(f"{capsule}: the capsule records no remote to list the commits from; pass --repo PATH_OR_URL")
    commits = tuple(Commit(sha, subject) for sha, subject in history(fixed_plan.source, recorded))
    if not commits:
        raise UsageError(f"{capsule}: no commit leads from the recorded {recorded[:12]} to --fixed-at {fixed_at}")
    fixed = commits[-1].sha
    progress.say(f"{len(commits)} commit(s) after the recorded {recorded[:12]} up to {fixed[:12]} (fixed)")
    back = [c.sha for c in reversed(commits[:-1])] + [recorded]  # from the one before FIXED_AT to the recorded
    runner = Trials(replayer, expected, progress, settings.max_runs, keep=settings.keep,
                    log=log_for(settings, "fix", plan, fixed))

    def test(sha: str) -> Observation:
        at = at_commit(plan, sha)
        return runner.observe(at, at, end_of(sha, fixed, recorded), f"commit {sha[:12]}")

    result = walk(fixed, back, test, settings.jobs, settings.rules)
    notes = (*_fix_notes(result, recorded, fixed, bool(plan.source and plan.source.diff)),
             *(FIX_MONOTONIC if n.startswith("bisection assumes") else n for n in result.notes), *runner.close())
    return FixResult(dataclasses.replace(result, notes=notes), commits, recorded, _fixes(result))


def check_modes(commits: bool, sweep: str | None, fixed_at: str | None, good: bool, junit: bool) -> None:
    """`replay bisect`'s modes, given together only where they make sense (exit 2 otherwise)."""
    if commits and sweep is not None:
        raise UsageError("--commits and --sweep bisect different things: give one of them")
    if fixed_at is not None and not commits:
        raise UsageError("--fixed-at finds the commit that fixed BAD's failure: give it with --commits")
    if fixed_at is not None and (good or junit):
        raise UsageError(f"--fixed-at bisects BAD alone: drop {'--good' if good else '--junit'}")
    if fixed_at is None and not good:
        raise UsageError("--good GOOD is missing: the capsule of a run that passed (or, to find the commit that "
                         "fixed BAD's failure: --commits --fixed-at COMMIT)")


def _fixes(result: Walk) -> tuple[Chance, ...]:
    """The walk's candidates (the last commit without the fix) as fixing commits (the one after it),
    likeliest first; the good end itself as a candidate means no fix on the line."""
    items = (result.good, *result.line)
    after = {items[k]: items[k - 1] for k in range(1, len(items))}
    chances = [Chance(after[c.item], c.probability) for c in result.candidates if c.item in after]
    return tuple(sorted(chances, key=lambda c: -c.probability))


def _fix_notes(result: Walk, recorded: str, fixed: str, dropped: bool) -> Sequence[str]:
    notes = ["every trial runs the capsule's environment at the commit"
             + (", without its recorded diff (the recorded commit too)" if dropped else "")]
    if result.status == "baseline fails":
        notes.append(f"the recorded failure still comes back at {fixed[:12]} (--fixed-at): not fixed there")
    if result.status == "not-reproduced":
        notes.append(f"the recorded commit {recorded[:12]}" + (" without its diff" if dropped else "")
                     + " does not fail the recorded way here: nothing to find the fix of")
    return notes

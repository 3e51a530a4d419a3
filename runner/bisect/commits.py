"""`replay bisect BAD --good GOOD --commits`: which commit between the two makes BAD fail.

`bisect_commits` walks (walk.py) the first-parent commits between the two capsules'
commits; every trial is the BAD capsule's plan at that commit, without its recorded
diff (the diff was made against the bad commit and need not apply to older ones).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codec import encode
from ..errors import UsageError
from ..build.plan import Plan, Source
from ..verdict.testsets import CUT_TAIL_NOTE
from .resume import log_for
from .trial import BisectSettings, LoaderLike, Observation, ProgressLike, ReplayerLike, Trials, end_of, load_ends, said
from .walk import Walk, walk


# --- commits ------------------------------------------------------------------------------

# (the bad plan's source, the good commit) -> (sha, subject) after it up to the bad commit, oldest first
History = Callable[[Source, str], Sequence[tuple[str, str]]]


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


@dataclass(frozen=True)
class CommitsResult:
    walk: Walk
    commits: tuple[Commit, ...]  # after the good commit, the bad one last

    @property
    def found(self) -> bool:
        return self.walk.found

    @property
    def first_failing(self) -> Commit | None:
        return next((c for c in self.commits if c.sha == self.walk.first_failing), None)


def commits_data(result: CommitsResult) -> dict[str, Any]:
    data: dict[str, Any] = encode(result)
    data["first_failing"] = encode(result.first_failing)
    return data


def bisect_commits(loader: LoaderLike, replayer: ReplayerLike, bad: Path, good: Path, settings: BisectSettings,
                   progress: ProgressLike, history: History) -> CommitsResult:
    _, bad_plan, _, good_plan, expected = load_ends(loader, bad, good)
    g, b = commit_of(good, good_plan), commit_of(bad, bad_plan)
    if g == b:
        raise UsageError(f"{bad}: both capsules are at commit {b[:12]}: no commits to bisect (drop --commits)")
    source = bad_plan.source
    assert source is not None  # commit_of checked it
    if not source.remote:
        raise UsageError(f"{bad}: the capsule records no remote to list the commits from; pass --repo PATH_OR_URL")
    commits = tuple(Commit(sha, subject) for sha, subject in history(source, g))
    if not commits:
        raise UsageError(f"{bad}: no commit leads from {g[:12]} to {b[:12]}")
    progress.say(f"{len(commits)} commit(s) after {g[:12]} up to {b[:12]}")
    line = [c.sha for c in commits]
    # a test cannot fail before it exists: fewer of the recorded failed tests is the failure (docs/signature.md)
    trials = Trials(replayer, expected.along_history(), progress, settings.max_runs, keep=settings.keep,
                    log=log_for(settings, "commits", bad_plan, g))

    def test(sha: str) -> Observation:
        plan = at_commit(bad_plan, sha)
        return trials.observe(plan, plan, end_of(sha, g, line[-1]), f"commit {sha[:12]}")

    result = walk(g, line, test, settings.jobs, settings.rules)
    notes = (*_commit_notes(result, bad_plan), *((CUT_TAIL_NOTE,) if expected.tests_cut else ()), *result.notes,
             *trials.close())
    return CommitsResult(dataclasses.replace(result, notes=notes), commits)


def git_history(source: Source, good: str) -> list[tuple[str, str]]:
    """The History of a real remote: its first-parent commits after `good` up to the source's commit."""
    from ..build.sources import repo as git_source
    from ..config import settings

    assert source.remote and source.commit  # bisect_commits and find_fix checked both
    return git_source.commits_between(settings(), source.remote, source.remote_from_user, good, source.commit)


def commit_of(path: Path, plan: Plan) -> str:
    if plan.source is None or not plan.source.commit:
        raise UsageError(f"{path}: the capsule records no commit; --commits needs both capsules' commits")
    return plan.source.commit


def at_commit(bad: Plan, sha: str) -> Plan:
    """The bad plan at another commit, as committed."""
    assert bad.source is not None
    source = dataclasses.replace(bad.source, commit=sha, diff="", diff_truncated=False, diff_redacted=False)
    return dataclasses.replace(bad, source=source)


def _commit_notes(result: Walk, bad: Plan) -> list[str]:
    dropped = bool(bad.source and bad.source.diff)
    notes = ["every trial runs the bad capsule's environment at the commit"
             + (", without the bad capsule's uncommitted diff (the bad end too)" if dropped else "")]
    good_end = result.good_end()
    bad_end = result.trial(result.line[-1])
    if result.status == "baseline fails" and good_end is not None:
        fails = "already fails" if good_end.verdict in ("reproduced", "different-failure") else "does not pass"
        notes.append(f"the good commit {result.good[:12]} {fails} in the bad environment ({said(good_end)}): "
                     "the cause is in the environment, not the commits (run without --commits)")
    if result.status == "not-reproduced" and bad_end is not None:
        notes.append(f"the bad commit {(bad_end.item or '')[:12]}" + (" without its diff" if dropped else "")
                     + f" does not fail the recorded way here ({said(bad_end)})")
    return notes


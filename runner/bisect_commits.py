"""`replay bisect BAD --good GOOD --commits`: which commit between the two makes BAD fail.

Two parts. `walk` is the pure search, shared with `--sweep` (bisect_sweep.py): along a
line of items from the good end (excluded) to the bad end (included), the first that
fails the recorded way, by bisection. Like `git bisect`, it assumes the failure, once
in, stays in (monotonic). A trial that fails another way, or cannot be judged, is
skipped as `git bisect skip` does: the open item nearest the middle is tried instead,
and skipped items left between the last pass and the first failure are named, since
the change may be any of them.

`bisect_commits` walks the first-parent commits between the two capsules' commits;
every trial is the BAD capsule's plan at that commit, without its recorded diff (the
diff was made against the bad commit and need not apply to older ones).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .bisect import Observation, Verdict
from .bisect_session import BisectSettings, ProgressLike, ReplayerLike, Run, check_ends, repeat
from .capsules.model import to_data
from .errors import BuildFailed, SourceUnavailable, UsageError
from .plan import Plan, Source
from .outcome import Expected, classify
from .replay import BuiltImage

Role = Literal["good end", "bad end", "search"]
WalkStatus = Literal["found", "baseline fails", "not reproduced"]
MONOTONIC = "bisection assumes the failure, once in, stays in (monotonic), as git bisect does"


@dataclass(frozen=True)
class Probe:
    """One trial on the line."""

    number: int
    item: str  # a commit or a version
    position: int  # 0: the good end; len(line): the bad end
    role: Role
    verdict: Verdict
    signature: str | None
    built: bool
    build_s: float
    run_s: float
    attempts: tuple[Verdict, ...] = ()


@dataclass(frozen=True)
class Walk:
    status: WalkStatus
    good: str
    line: tuple[str, ...]  # after the good end, the bad end last
    first_failing: str | None
    last_passing: str | None
    probes: tuple[Probe, ...]
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.status == "found"

    def probe(self, item: str) -> Probe | None:
        return next((p for p in self.probes if p.item == item), None)


TestFn = Callable[[str], Observation]


class _Walker:
    def __init__(self, items: Sequence[str], test: TestFn, jobs: int, pool: ThreadPoolExecutor) -> None:
        self.items, self.test, self.jobs, self.pool = tuple(items), test, max(1, jobs), pool
        self.seen: dict[int, Probe] = {}
        self.probes: list[Probe] = []

    def run(self, positions: Sequence[int]) -> None:
        observed = list(self.pool.map(self.test, [self.items[p] for p in positions]))
        for p, obs in zip(positions, observed):
            role: Role = "good end" if p == 0 else "bad end" if p == len(self.items) - 1 else "search"
            probe = Probe(len(self.probes) + 1, self.items[p], p, role, obs.verdict, obs.signature, obs.built,
                          obs.build_s, obs.run_s, obs.attempts)
            self.seen[p] = probe
            self.probes.append(probe)

    def bounds(self) -> tuple[int, int]:
        """(last pass before the first recorded failure, first recorded failure)."""
        hi = min(p for p, t in self.seen.items() if t.verdict == "recorded")
        lo = max((p for p, t in self.seen.items() if t.verdict == "pass" and p < hi), default=0)
        return lo, hi

    def search(self) -> tuple[int, int]:
        while True:
            lo, hi = self.bounds()
            todo = [p for p in range(lo + 1, hi) if p not in self.seen]
            if not todo:
                return lo, hi
            self.run(picks(todo, lo, hi, self.jobs))


def picks(todo: Sequence[int], lo: int, hi: int, jobs: int) -> list[int]:
    """Up to `jobs` open positions nearest the points cutting (lo, hi) into equal parts:
    one job halves the line, k jobs cut it k+1 ways in one round."""
    k = min(jobs, len(todo))
    left, out = list(todo), []
    for i in range(1, k + 1):
        target = lo + (hi - lo) * i / (k + 1)
        best = min(left, key=lambda p: (abs(p - target), p))
        left.remove(best)
        out.append(best)
    return sorted(out)


def walk(good: str, line: Sequence[str], test: TestFn, jobs: int = 1) -> Walk:
    """Check both ends, then bisect the line for its first recorded failure."""
    if not line:
        raise ValueError("an empty line: nothing after the good end")
    items = (good, *line)
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="bisect") as pool:
        w = _Walker(items, test, jobs, pool)
        w.run([0, len(line)])
        if w.seen[0].verdict != "pass":
            return Walk("baseline fails", good, tuple(line), None, None, tuple(w.probes))
        if w.seen[len(line)].verdict != "recorded":
            return Walk("not reproduced", good, tuple(line), None, None, tuple(w.probes))
        lo, hi = w.search()
    return Walk("found", good, tuple(line), items[hi], items[lo], tuple(w.probes), tuple(_walk_notes(w, lo, hi)))


def _walk_notes(w: _Walker, lo: int, hi: int) -> list[str]:
    notes = [MONOTONIC]
    skipped = [w.seen[p] for p in sorted(w.seen) if lo < p < hi]
    if skipped:
        notes.append(f"{len(skipped)} item(s) between the last pass and the first failure could not be judged "
                     f"({', '.join(f'{t.item[:12]}: {said(t)}' for t in skipped)}): the change may be in any of them")
    later = [w.seen[p] for p in sorted(w.seen) if p > hi and w.seen[p].verdict == "pass"]
    if later:
        notes.append(f"not monotonic: {', '.join(t.item[:12] for t in later)} passed after {w.items[hi][:12]} "
                     "failed; the first failure found is reported")
    return notes


def said(t: Probe) -> str:
    return t.verdict if not t.signature else f"{t.verdict}, {t.signature}"


# --- trials: one plan per item ----------------------------------------------------------


class PlanTrials:
    """The walk's test callback: item -> plan -> image -> attempts, each judged against
    the bad capsule's recorded failure. Images differ only in the varied part, so each
    build reuses the cached layers below it."""

    def __init__(self, replayer: ReplayerLike, expected: Expected, plan_of: Callable[[str], Plan],
                 ends: Collection[str], attempts: int, progress: ProgressLike, shown: Callable[[str], str]) -> None:
        self.replayer, self.expected, self.plan_of, self.ends = replayer, expected, plan_of, ends
        self.attempts, self.progress, self.shown = attempts, progress, shown

    def __call__(self, item: str) -> Observation:
        plan = self.plan_of(item)
        try:
            image = self.replayer.image(plan)
        except (BuildFailed, SourceUnavailable) as e:
            if item in self.ends:
                raise  # an end that cannot be built: nothing to compare with (exit 3)
            return Observation("inconclusive", f"build failed: {e.message}")
        with self.progress.step(f"trial: {self.shown(item)}"):
            obs = repeat(lambda: self.once(plan, image), self.attempts)
        return dataclasses.replace(obs, built=image.built, build_s=image.build_s)

    def once(self, plan: Plan, image: BuiltImage) -> Run:
        attempt = self.replayer.attempt(plan, image)
        return Run(classify(self.expected, attempt), attempt.signature, attempt.duration_s)


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
    data: dict[str, Any] = to_data(result)
    data["first_failing"] = to_data(result.first_failing)
    return data


def bisect_commits(replayer: ReplayerLike, bad: Path, good: Path, settings: BisectSettings,
                   progress: ProgressLike, history: History) -> CommitsResult:
    bad_capsule, bad_plan = replayer.load(bad)
    good_capsule, good_plan = replayer.load(good)
    expected = replayer.expected(bad_capsule)
    check_ends(bad, expected, good, replayer.expected(good_capsule))
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
    trials = PlanTrials(replayer, expected, lambda sha: at_commit(bad_plan, sha), {g, line[-1]}, settings.attempts,
                        progress, lambda sha: f"commit {sha[:12]}")
    result = walk(g, line, trials, settings.jobs)
    notes = (*_commit_notes(result, bad_plan), *result.notes)
    return CommitsResult(dataclasses.replace(result, notes=notes), commits)


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
    good_end, bad_end = result.probe(result.good), result.probe(result.line[-1])
    if result.status == "baseline fails" and good_end is not None:
        fails = "already fails" if good_end.verdict in ("recorded", "other") else "does not pass"
        notes.append(f"the good commit {result.good[:12]} {fails} in the bad environment ({said(good_end)}): "
                     "the cause is in the environment, not the commits (run without --commits)")
    if result.status == "not reproduced" and bad_end is not None:
        notes.append(f"the bad commit {bad_end.item[:12]}" + (" without its diff" if dropped else "")
                     + f" does not fail the recorded way here ({said(bad_end)})")
    return notes

"""One trial record and one trial runner, for every bisect mode.

A trial is a plan (the good environment with some facts applied, or the bad one at
another commit, or with another version of one fact), its image, and the runs the search
asks of it, judged against the bad capsule's recorded failure. The fact search (search.py)
and the walk along a line (walk.py) decide how many runs each trial gets and only see
Observations; both modes' results list Trials.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from ..capsules.model import Capsule
from ..errors import BuildFailed, BuildTimedOut, SourceUnavailable, UsageError
from ..verdict.judge import Attempt, Classification, Expected, Verdict, expected_of, trial_verdict
from ..engine import Mount
from ..build.images import image_key
from ..build.plan import Plan
from ..replay import BuiltImage
from ..verdict.rate import DEFAULT_CONFIDENCE
from ..replay.defaults import DEFAULT_BISECT_MAX_RUNS
from .rules import Rules
from ..replay.toolcache import NONE, Shared, ToolCache

Role = Literal["good end", "bad end", "both ends", "search"]
End = Literal["good", "bad"] | None  # which end a trial is, if it is one
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LoaderLike(Protocol):
    """Opening and planning a capsule (replay/loading.py)."""

    def load(self, path: Path) -> tuple[Capsule, Plan]: ...


class ReplayerLike(Protocol):
    """The runner of attempts (replay/replayer.py), with its image service's images."""

    def image(self, plan: Plan) -> BuiltImage: ...
    # the plan's image as made, and whether this call made it (the image service's, imageservice.py)
    def fetch(self, plan: Plan) -> tuple[BuiltImage, bool]: ...
    # judged against `expected` on what the program printed (the attempt returned is scrubbed of secrets)
    # keep: the attempt may be kept (--keep: the bad end's); fill_go False: a trial between the ends, whose
    # image fills Go's shared build cache only when no image has (toolcache.GoCache)
    def attempt(self, plan: Plan, image: BuiltImage, expected: Expected | None = None, *,
                mounts: tuple[Mount, ...] = (), keep: bool | None = None, fill_go: bool = True) -> Attempt: ...


class ProgressLike(Protocol):
    def step(self, name: str) -> AbstractContextManager[Any]: ...
    def say(self, text: str) -> None: ...


@dataclass(frozen=True)
class BisectSettings:
    attempts: int | None = None  # --attempts: the most runs one item or set of facts gets (None: as needed)
    jobs: int = 1
    cache_reuse: bool = False  # trials after the ends share one test-tool cache per image (--no-cache-reuse)
    confidence: float = DEFAULT_CONFIDENCE
    max_runs: int = DEFAULT_BISECT_MAX_RUNS
    budget_s: float | None = None
    keep: bool = False  # --keep: the bad end's first attempt as recorded (or its last) stays (replay/keep.py)
    outcomes: Path | None = None  # where trial outcomes are kept (resume.py); None: nowhere
    resume: bool = False  # --resume: the outcomes an earlier bisect of the same question kept are taken first
    context: str = ""  # what the runs depend on beside plan and image (resume.run_context): part of the question

    @property
    def rules(self) -> Rules:
        return Rules(self.confidence, self.max_runs, self.budget_s, self.attempts)


@dataclass(frozen=True)
class Observation:
    """What one trial saw."""

    verdict: Verdict
    signature: str | None = None  # of the attempt that decided the verdict
    built: bool = False  # this trial built a new image
    build_s: float = 0.0
    run_s: float = 0.0
    attempts: tuple[Classification, ...] = ()


@dataclass(frozen=True)
class Trial:
    """One trial as a result lists it. The fact search fills keys/image_keys, the walk
    item/position."""

    number: int
    role: Role
    verdict: Verdict
    signature: str | None
    built: bool
    build_s: float
    run_s: float
    attempts: tuple[Classification, ...] = ()
    keys: tuple[str, ...] = ()  # facts applied to the good environment, cheap first
    image_keys: tuple[str, ...] = ()  # the build-time ones among them: which image ran
    item: str | None = None  # a commit or a version
    position: int | None = None  # 0: the good end


def trial(number: int, role: Role, obs: Observation, **where: Any) -> Trial:
    return Trial(number, role, obs.verdict, obs.signature, obs.built, obs.build_s, obs.run_s, obs.attempts, **where)


def said(t: Trial) -> str:
    return t.verdict if not t.signature else f"{t.verdict}, {t.signature}"


@dataclass(frozen=True)
class Run:
    """One attempt as bisect sees it."""

    kind: Classification
    signature: str | None
    seconds: float


def runs_of(once: Callable[[], Run], most: int) -> Observation:
    """Up to `most` runs, stopping at the first that fails the recorded way (one such run
    decides: a signature match is specific); the trial's verdict (trial_verdict) and the
    signature of the run that decided it."""
    runs: list[Run] = []
    for _ in range(max(1, most)):
        runs.append(once())
        if runs[-1].kind == "recorded":
            break
    kinds = tuple(r.kind for r in runs)
    verdict = trial_verdict(kinds)
    wanted = {"reproduced": "recorded", "different-failure": "other", "inconclusive": "inconclusive"}.get(verdict)
    decider = next((r for r in runs if r.kind == wanted), None)
    return Observation(verdict, decider.signature if decider else None, run_s=sum(r.seconds for r in runs),
                       attempts=kinds)


class OutcomeLog(Protocol):
    """Trial outcomes kept and taken again (resume.TrialLog), by a key of the trial's image and item."""

    def take(self, key: str) -> Observation | None: ...
    def keep(self, key: str, obs: Observation) -> None: ...
    def notes(self) -> list[str]: ...


class Trials:
    """Runs trials: the image of a plan once per image key, then the runs the search asks for,
    each judged against the bad capsule's recorded failure; with a log, each outcome kept, and one
    kept before taken instead of run (--resume)."""

    def __init__(self, replayer: ReplayerLike, expected: Expected, progress: ProgressLike,
                 most: int | None = None, cache_reuse: bool = False, keep: bool = False,
                 log: OutcomeLog | None = None) -> None:
        self.replayer, self.expected, self.progress = replayer, expected, progress
        self.most = most  # the run budget (progress only)
        self.runs = 0
        self._count = threading.Lock()
        self.tool_cache = ToolCache() if cache_reuse else None
        self._ends: dict[str, bool] = {}  # an end -> whether it has behaved as recorded yet
        self.keep = keep  # --keep: the bad end's attempts may be kept
        self.log = log

    def observe(self, plan: Plan, image_plan: Plan, end: End, title: str, runs: int = 1) -> Observation:
        """Up to `runs` runs of the plan (fewer when one fails the recorded way), on `image_plan`'s image;
        an outcome the log kept instead, when it has one (nothing built, nothing run)."""
        if self.log is None:
            return self._observe(plan, image_plan, end, title, runs)
        key = f"{image_key(image_plan)}:{hashlib.sha256(repr(plan).encode()).hexdigest()[:24]}"
        kept = self.log.take(key)
        if kept is not None:
            self._said(f"{title} (kept)", kept)
            return kept
        obs = self._observe(plan, image_plan, end, title, runs)
        self.log.keep(key, obs)
        return obs

    def _observe(self, plan: Plan, image_plan: Plan, end: End, title: str, runs: int) -> Observation:
        try:
            image, first = self.replayer.fetch(image_plan)  # once per image: a variant that cannot be built is not tried again
        except (BuildFailed, SourceUnavailable) as e:
            if end is not None or isinstance(e, BuildTimedOut):
                # an end that cannot be built: nothing to compare with; a build that hit
                # REPLAY_BUILD_TIMEOUT: every other variant would wait as long (exit 3)
                raise
            # a variant that cannot be built (a runtime no source offers...) tells nothing
            return Observation("inconclusive", f"build failed: {e.message}")
        on_first, on_later = self.tool_cache.mounts(image.ref, end, plan) if self.tool_cache is not None else (NONE, NONE)
        ran = itertools.count()
        with self.progress.step(f"trial: {title}"):
            obs = runs_of(lambda: self.once(plan, image, on_later if next(ran) else on_first,
                                            self.keep and end == "bad", end is not None), runs)
        self._said(title, obs)
        if self.tool_cache is not None and end is not None:
            wanted = "reproduced" if end == "bad" else "not-reproduced"
            self._ends[end] = self._ends.get(end, False) or obs.verdict == wanted
            self.tool_cache.end_seen(end, wanted if self._ends[end] else obs.verdict)
        return dataclasses.replace(obs, built=first and image.built, build_s=image.build_s if first else 0.0)

    def _said(self, title: str, obs: Observation) -> None:
        """Each trial's result as it comes, with the runs spent."""
        with self._count:
            self.runs += len(obs.attempts)
            n = self.runs
        budget = "" if self.most is None else f" of at most {self.most}"
        runs = f"{len(obs.attempts)} runs" if len(obs.attempts) > 1 else "1 run"
        self.progress.say(f"{title}: {obs.verdict} ({runs}; {n}{budget} in all)")

    def once(self, plan: Plan, image: BuiltImage, cache: Shared = NONE, keep: bool = False,
             fill_go: bool = True) -> Run:
        kept: dict[str, bool] = {"keep": True} if keep else {}
        attempt = self.replayer.attempt(cache.apply(plan), image, self.expected, mounts=cache.mounts, fill_go=fill_go,
                                        **kept)
        return Run(attempt.classification, attempt.signature, attempt.duration_s)

    def close(self) -> list[str]:
        """Remove the shared caches; the notes the result gets about them (and about kept outcomes)."""
        return (self.tool_cache.close() if self.tool_cache is not None else []) + \
            (self.log.notes() if self.log is not None else [])


def cores() -> int:
    """The cores this process may use: the default --jobs."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def end_of(item: Hashable, good: Hashable, bad: Hashable) -> End:
    return "bad" if item == bad else "good" if item == good else None


def totals(trials: Sequence[Trial], wall_s: float) -> dict[str, Any]:
    """What a bisect spent: trials, attempts (containers run), images built, wall time."""
    return {"trials": len(trials), "attempts": sum(len(t.attempts) for t in trials),
            "builds": sum(1 for t in trials if t.built), "wall_s": round(wall_s, 2)}


def check_ends(bad: Path, bad_expected: Expected, good: Path, good_expected: Expected) -> None:
    """Usage errors (exit 2) naming the capsule that is the wrong way round."""
    if not bad_expected.failed:
        raise UsageError(f"{bad}: the bad capsule recorded a pass; BAD must be a run that failed")
    if good_expected.failed:
        raise UsageError(f"{good}: the good capsule (--good) recorded a failure; GOOD must be a run that passed")


def load_ends(loader: LoaderLike, bad: Path, good: Path) -> tuple[Capsule, Plan, Capsule, Plan, Expected]:
    """Both ends read and planned once (together: planning asks the registries), checked the
    right way round."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="bisect-load") as pool:
        loading = pool.submit(loader.load, bad), pool.submit(loader.load, good)
        (bad_capsule, bad_plan), (good_capsule, good_plan) = (f.result() for f in loading)
    expected = expected_of(bad_capsule)
    check_ends(bad, expected, good, expected_of(good_capsule))
    return bad_capsule, bad_plan, good_capsule, good_plan, expected



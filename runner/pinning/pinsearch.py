"""`replay pin CAPSULE`: the setting under which the recorded failure comes back every time.

Each candidate setting (axes.py) runs in fresh containers of the one image (every setting is a
run-time one: build/seeding.py), until a run passes or `--pin-runs` runs all failed as recorded:
the first candidate, in axis order, that failed every run is the pin. Candidates run in parallel
up to the cores; a candidate that passed once is out (a pin fails every time), after at least
LEAST runs, so each axis's rate is measured on a few runs of each of its settings, pooled.
"""
from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..build.plan import Plan
from ..codec import encode
from ..build.seeding import pinned
from ..capsules.model import Capsule, FrozenMap
from ..errors import Exit
from ..verdict.rate import Rate
from .axes import AXES, Candidate

LEAST = 2  # runs every candidate gets before a pass rules it out: its axis's rate needs a few


@dataclass(frozen=True)
class Tried:
    """One candidate setting and how often the recorded failure came back under it."""

    axis: str
    setting: str  # "GOMAXPROCS=8"; "as recorded"
    rate: Rate
    cut_short: bool = False  # stopped early: another setting pinned it, or the budget ended


@dataclass(frozen=True)
class AxisRate:
    """An axis's settings' runs pooled: how often the failure came back while this axis varied."""

    axis: str
    settings: int
    rate: Rate


@dataclass(frozen=True)
class PinResult:
    capsule: str
    pinned: bool
    settings: FrozenMap[str, str]  # the pin: setting -> value (verdict/seeds.py names); empty when not pinned
    rate: Rate | None  # the pin's own runs
    command: str  # the recorded command under the pin, as a developer runs it
    rerun: str  # the replay that shows it (the -o capsule's, when written)
    axes: tuple[AxisRate, ...]
    tried: tuple[Tried, ...]
    runs: int
    wall_s: float
    budget_ended: bool
    written: str | None = None

    @property
    def exit_code(self) -> int:
        return int(Exit.OK if self.pinned else Exit.NEGATIVE)

    def data(self) -> Any:
        """The --json result."""
        return encode(self)


Attempt1 = Callable[[Plan], bool]  # one run of a plan in a fresh container: did the recorded failure come back?


@dataclass(frozen=True)
class Search:
    pin_runs: int
    jobs: int
    budget_s: float | None
    confidence: float


def search(capsule: Capsule, base: Plan, cands: tuple[Candidate, ...], run: Attempt1, how: Search,
           say: Callable[[str], None]) -> tuple[tuple[Tried, ...], Candidate | None, bool]:
    """Every candidate tried (in order), the pin (the first, in order, that failed every run) and
    whether the budget ended the search."""
    start = time.monotonic()
    found = threading.Event()
    over = threading.Event()

    def one(cand: Candidate) -> tuple[int, int, bool]:
        plan, _ = pinned(base, cand.settings, capsule.provenance.path)
        failed = runs = 0
        while runs < how.pin_runs and not (runs >= LEAST and failed < runs):
            if found.is_set():
                return failed, runs, True
            if how.budget_s is not None and time.monotonic() - start > how.budget_s:
                over.set()
                return failed, runs, True
            failed, runs = failed + run(plan), runs + 1
        if failed == runs == how.pin_runs:
            found.set()
        say(f"{cand.label}: failed {failed} of {runs}")
        return failed, runs, False

    with ThreadPoolExecutor(max_workers=max(1, how.jobs), thread_name_prefix="replay-pin") as pool:
        outcomes = list(pool.map(one, cands))
    tried = tuple(Tried(c.axis, c.label, Rate.of(f, n, how.confidence), cut)
                  for c, (f, n, cut) in zip(cands, outcomes))
    pin = next((c for c, (f, n, _) in zip(cands, outcomes) if f == n == how.pin_runs), None)
    return tried, pin, over.is_set()


def axis_rates(tried: tuple[Tried, ...], confidence: float) -> tuple[AxisRate, ...]:
    out = []
    for axis in AXES:
        mine = [t for t in tried if t.axis == axis and t.rate.runs]
        if mine:
            out.append(AxisRate(axis, len(mine), Rate.of(sum(t.rate.failed for t in mine),
                                                         sum(t.rate.runs for t in mine), confidence)))
    return tuple(out)


# the variables a setting reaches (build/seeding.py), shown in front of the pinned command
SHOWN_ENV = ("PYTEST_ADDOPTS", "GOFLAGS", "PYTHONHASHSEED", "GOMAXPROCS")


def command_line(plan: Plan) -> str:
    """The command as the pinned plan runs it: its variables, its argv, its CPU limit."""
    env = [f"{k}={shlex.quote(v.value)}" for k in SHOWN_ENV if (v := plan.env.get(k)) is not None and v.state == "set"]
    line = " ".join([*env, shlex.join(plan.argv)])
    return line + (f"   # in a container limited to {plan.cpus} CPU(s) (docker run --cpus {plan.cpus})"
                   if plan.cpus else "")

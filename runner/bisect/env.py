"""`replay bisect BAD --good GOOD`: from two capsules to the search on the real engine.

The environment bisect runs at the bad commit: every trial is the good capsule's plan
moved to the bad capsule's commit, with a subset of the bad capsule's differing facts
(variation.py) applied. The two ends are trials too: no fact (must pass) and every fact
(must fail the recorded way). What variation.py cannot vary (the command, the commit,
recorded HTTP exchanges, values whose content was not recorded...) is listed as not
varied, with the reason, so that "no culprit" never hides where the cause may be.
"""
from __future__ import annotations

import dataclasses
import hashlib
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..facts import factkeys
from ..capsules.model import Capsule
from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..facts.diff import diff_capsules
from ..facts.inspect import env_shown
from ..build.plan import BaseImage, EnvSetting, Lock, Plan, Runtime, Tool
from ..build.planner import fill_only
from . import variation
from .variation import Fact
from .search import BisectResult, Candidate, NotVaried, search, with_context
from .resume import log_for
from .trial import BisectSettings, LoaderLike, Observation, ProgressLike, ReplayerLike, Trials, end_of, load_ends

SHOWN_MAX = 120  # a cell, not a dump: long values (a diff, a secret-looking blob) are cut


def bisect_capsules(loader: LoaderLike, replayer: ReplayerLike, bad: Path, good: Path, settings: BisectSettings,
                    progress: ProgressLike) -> BisectResult:
    bad_capsule, bad_plan, good_capsule, good_plan, expected = load_ends(loader, bad, good)
    base = at_bad_commit(good_plan, bad_plan)
    changes = variation.differences(base, bad_plan)
    candidates = [candidate(f, base) for f in changes]
    progress.say(f"{len(candidates)} candidate fact(s): {', '.join(c.key for c in candidates) or 'none'}")
    runner = Trials(replayer, expected, progress, settings.max_runs, settings.cache_reuse, settings.keep,
                    log_for(settings, "facts", bad_plan, good_plan))
    try:
        result = search(candidates, FactTrials(runner, base, changes), jobs=settings.jobs, rules=settings.rules)
    finally:
        cache_notes = runner.close()
    varied = {c.key for c in candidates}
    return with_context(result, not_varied(good_capsule, bad_capsule, good_plan, bad_plan, varied),
                        [*context_notes(good_plan, bad_plan), *cache_notes])


def fill_only_of(paths: Sequence[Path], trust: Trust, supplied: Sequence[tuple[str, str]]) -> frozenset[str]:
    """The supplied --env names that one of the capsules records by name only: filled in where it
    was set, they stay unset in the capsule that recorded them unset, so the search can vary them
    (planner.fill_only). The capsules are read only when values were supplied."""
    if not supplied:
        return frozenset()
    return fill_only((open_capsule(path, trust).capsule for path in paths), supplied)


def at_bad_commit(good: Plan, bad: Plan) -> Plan:
    """The good plan at the bad commit, the base every trial starts from.

    The diff stays the good one: it is a fact (source:diff) the search can vary. The
    image also generates the bad plan's locales, so that LANG and LC_* stay run-time
    facts (setting LANG to a locale the image lacks would change nothing).
    """
    source = good.source
    if bad.source is not None:
        g = good.source
        source = dataclasses.replace(bad.source, diff=g.diff if g else "", diff_truncated=bool(g and g.diff_truncated),
                                     diff_redacted=bool(g and g.diff_redacted))
    locales = tuple(sorted(set(good.locales) | set(bad.locales)))
    return dataclasses.replace(good, source=source, locales=locales)


class FactTrials:
    """The search's test callback: facts -> plan -> image (once per set of build-time
    keys) -> attempts."""

    def __init__(self, trials: Trials, base: Plan, changes: Sequence[Fact]) -> None:
        self.trials, self.base = trials, base
        self.by_key = {f.key: f for f in changes}
        self.everything = frozenset(self.by_key)

    def __call__(self, keys: tuple[str, ...], runs: int = 1) -> Observation:
        chosen = [self.by_key[k] for k in keys]
        # Only the build-time facts go into the image's plan: every trial with the same
        # build-time keys then shares one image, whatever its run-time facts.
        image_plan = variation.apply(self.base, [f for f in chosen if f.stage == "build"])
        title = f"good + {', '.join(keys)}" if keys else "good"
        chosen_set = frozenset(keys)
        return self.trials.observe(variation.apply(self.base, chosen), image_plan,
                                   end_of(chosen_set, frozenset(), self.everything), title, runs)


# --- what is shown ----------------------------------------------------------------------


def candidate(fact: Fact, base: Plan) -> Candidate:
    before = variation.facts(base).get(fact.key)
    return Candidate(fact.key, fact.stage, fact.cost, shown(before.value if before else None), shown(fact.value))


def shown(value: object) -> str | None:
    """A fact's value as one short line (None: absent)."""
    if value is None or isinstance(value, EnvSetting) and value.state == "withheld":
        return None
    if isinstance(value, EnvSetting):
        text = value.value if value.state == "set" else f"({value.state})"
    elif isinstance(value, (Runtime, Tool)):
        text = f"{value.name} {value.version}"
    elif isinstance(value, BaseImage):
        text = f"{value.key} ({value.distro} {value.version})"
    elif isinstance(value, Lock):
        text = f"{value.path} ({value.manager}{', sha256 ' + value.sha256[:12] if value.sha256 else ''})"
    elif isinstance(value, tuple) and all(isinstance(v, str) for v in value):  # a package at several versions
        text = ", ".join(value)
    elif isinstance(value, str) and "\n" in value:  # a diff
        text = f"{value.count(chr(10)) + 1} lines, sha256 {_digest(value)}"
    else:
        text = str(value)
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:12]


def _counted(items: tuple[Any, ...], noun: str) -> str | None:
    return f"{len(items)} {noun}(s), #{_digest(items)}" if items else None


# Plan fields variation.py does not model: (key, how shown, why every trial keeps the good one).
_UNVARIED: tuple[tuple[str, Callable[[Plan], str | None], str], ...] = (
    ("command:argv", lambda p: shlex.join(p.argv), "not an environment fact: every trial runs the good capsule's command"),
    ("command:cwd", lambda p: p.workdir_rel, "every trial runs in the good capsule's working directory"),
    (factkeys.SOURCE_COMMIT, lambda p: p.source.commit if p.source else None,
     "commits are not bisected here (no --commits): every trial runs at the bad commit, "
     "or the good one when the bad capsule records none"),
    (factkeys.HTTP_CALLS, lambda p: _counted(p.http_calls, "call"),
     "recorded HTTP exchanges are served, not varied: every trial gets the good capsule's"),
    ("values", lambda p: _counted(p.values, "value"), "every trial replays the good capsule's clock and random values"),
    ("clock", lambda p: p.clock_start, "every trial starts the clock where the good capsule did"),
    ("network", lambda p: " ".join([p.network, *p.allowed_hosts, *(f"!{h}" for h in p.denied_hosts)]),
     "every trial keeps the good capsule's network policy"),
)


def not_varied(good_capsule: Capsule, bad_capsule: Capsule, good: Plan, bad: Plan, varied: set[str]) -> list[NotVaried]:
    """Every difference `diff` reports that is not a candidate, under the same key, with why."""
    out = [NotVaried(key, show(good), show(bad), why) for key, show, why in _UNVARIED if show(good) != show(bad)]
    out += _env_not_varied(good_capsule, bad_capsule, varied)
    listed = varied | {n.key for n in out}
    for d in diff_capsules(good_capsule, bad_capsule).differences:
        if d.key not in listed:
            out.append(NotVaried(d.key, d.a, d.b, _why_not(d.key, varied)))
    return out


# Recorded facts that reach a trial through another key: (key prefix, the key it is varied as).
_VARIED_AS = (("platform:distro", factkeys.PLATFORM_BASE), ("platform:libc", factkeys.PLATFORM_BASE),
              ("locale:timeZone", factkeys.env("TZ")), ("locale:lang", factkeys.env("LANG")),
              ("locale:lc_all", factkeys.env("LC_ALL")), ("source:dirty", factkeys.SOURCE_DIFF))
_WHY = (
    ("platform:", "every trial runs on this machine's platform and kernel"),
    ("locale:", "every trial gets the plans' locale variables (env:LANG, env:LC_*)"),
    ("source:", "informational: what ran is the commit and its diff"),
    ("input:", "every trial gets the good capsule's input files"),
    ("http:", "recorded HTTP exchanges are served, not varied: every trial gets the good capsule's"),
    ("pin:", "not pinned in the plans (a packaging tool, or its runtime is not installed: see the fidelity rows)"),
    ("runtime:", "recorded, not installed: the command does not need it"),
    ("tool:", "recorded, not installed here, or comes with its runtime"),
    ("lock:", "the plans install the same lockfile (or none)"),
    ("env:", "the plans set the same value (or it is host-specific)"),
    ("command:", "not an environment fact: every trial runs the good capsule's command"),
)


def _why_not(key: str, varied: set[str]) -> str:
    for prefix, as_key in _VARIED_AS:
        if key.startswith(prefix):
            return f"varied as {as_key}" if as_key in varied else f"both capsules map it to the same {as_key}"
    if key.endswith(":declared") and key.rsplit(":", 1)[0] in varied:
        return f"varied as {key.rsplit(':', 1)[0]}"
    return next((why for prefix, why in _WHY if key.startswith(prefix)), "the plans do not carry this fact")


def _env_not_varied(good: Capsule, bad: Capsule, varied: set[str]) -> list[NotVaried]:
    """Recorded env differences that the plans do not carry (values not recorded,
    host-specific variables): the search cannot apply them."""
    out = []
    for name in sorted(set(good.env) | set(bad.env)):
        g, b = good.env.get(name), bad.env.get(name)
        host = any(f is not None and f.host_specific for f in (g, b))
        unknown = any(f is not None and f.state == "set" and f.value is None for f in (g, b))
        # a difference without either reason is one the plans carry (a candidate) or
        # one they fold away (TZ from the recorded time zone): nothing to report
        if f"env:{name}" in varied or _env_key(g) == _env_key(b) or not (host or unknown):
            continue
        why = ("host-specific: every trial gets the container's own value" if host
               else "its value was not recorded, so it cannot be applied")
        out.append(NotVaried(f"env:{name}", env_shown(g) if g else None, env_shown(b) if b else None, why))
    return out


def _env_key(f: Any) -> tuple[Any, ...] | None:
    return None if f is None else (f.state, f.value, f.hash)


def context_notes(good: Plan, bad: Plan) -> list[str]:
    g = good.source.commit if good.source else None
    b = bad.source.commit if bad.source else None
    notes = []
    if g and b and g != b:
        notes.append(f"the capsules are from different commits (good {g[:12]}, bad {b[:12]}): "
                     "the environment bisect runs at the bad commit")
        notes.append("run with --commits to bisect the commits in the bad environment")
        if good.source and good.source.diff:
            notes.append("the good capsule's uncommitted diff is applied on the bad commit")
    if set(bad.locales) - set(good.locales):
        notes.append("the good image also generates the bad capsule's locales, so LANG/LC_* vary at run time")
    return notes

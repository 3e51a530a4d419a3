"""`replay pin CAPSULE`, the use case: open, plan, build once, search the axes, write the pinned capsule."""
from __future__ import annotations

import dataclasses
import json
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..bisect import cores
from ..replay.toolcache import ToolCache
from ..build.plan import Plan, PlanOptions
from ..build.seeding import pinned
from ..capsules.model import FrozenMap
from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..errors import CapsuleError, UsageError
from ..replay import Progress, Replayer, ReplayOptions
from ..replay import inputs as o
from ..replay.inputs import write_text
from ..replay.loading import Loader
from ..verdict.judge import expected_of
from ..verdict.rate import Rate
from .axes import candidates
from .pinsearch import PinResult, Search, axis_rates, command_line, search

_ENV_SETTINGS = ("PYTHONHASHSEED", "GOMAXPROCS")  # settings that are variables: recorded as env facts too


def pin_command(v: Mapping[str, Any], err: Any = None, quiet: bool = False, output: Path | None = None) -> PinResult:
    """`replay pin`'s options (commands/catalog.py PIN) checked, then the search, its progress on `err` (a
    console); its replay's leftovers removed."""
    progress = Progress(err, quiet=quiet)
    plan_opts = dataclasses.replace(o.plan_options(v), seeds=False)  # the search sets every seed itself
    replayer = Replayer(ReplayOptions(timeout=v["timeout"], memory=v["memory"], verbose=v.get("verbose", False),
                                      plan=plan_opts, secret_env=plan_opts.env_overrides, trust=o.trust(v),
                                      confidence=v["confidence"]), progress)
    n = cores()
    try:
        return pin_capsule(v["capsule"], replayer, Search(v["pin_runs"], v["jobs"] or n, v["budget"], v["confidence"]),
                           progress, n, output if output is not None else v.get("output"), not v["no_seeds"])
    finally:
        replayer.close()


def bisect_pin(v: Mapping[str, Any], trust: Trust, progress: Progress) -> FrozenMap[str, str]:
    """The pin `replay bisect` runs every trial under: BAD's own (`replay pin -o`), or with --pin the one
    a search finds first (none found: the bisect runs unpinned, and says so)."""
    if not v.get("pin"):
        try:
            own = open_capsule(v["bad"], trust).capsule.pin
        except CapsuleError:  # the bisect opens it again and says what is wrong with it
            return FrozenMap()
        return own.settings if own is not None else FrozenMap()
    capsule = open_capsule(v["bad"], trust).capsule
    if capsule.pin is not None:
        return capsule.pin.settings
    plan = PlanOptions(repo=v["repo"], env_overrides=o.parse_env(v["env"]), salt=v["salt"],
                       http_ignore=tuple(v["http_ignore"]), seeds=False)
    replayer = Replayer(ReplayOptions(timeout=v["timeout"], plan=plan, secret_env=plan.env_overrides, trust=trust),
                        progress)
    try:
        result = pin_capsule(v["bad"], replayer, Search(10, v["jobs"] or cores(), None, v["confidence"]), progress,
                             cores())
    finally:
        replayer.close()
    progress.say(f"bisecting under the pin {' '.join(f'{k}={x}' for k, x in result.settings.items())}"
                 if result.pinned else "nothing pinned BAD's failure: bisecting it unpinned")
    return result.settings


def pin_capsule(given: Path | str, replayer: Replayer, how: Search, progress: Progress, cores: int,
                output: Path | None = None, seeds: bool = True) -> PinResult:
    start = time.monotonic()
    loader = Loader(replayer.options, replayer.settings)
    with progress.step("verify capsule"):
        opened = loader.open(given)
    with progress.step("plan"), opened.naming():
        capsule = dataclasses.replace(opened.capsule, pin=None)  # a pin is searched for afresh
        _, base = loader.plan(capsule)
    if not capsule.failed:
        raise UsageError(f"{opened.name}: the capsule records a pass: there is no failure to pin")
    if output is not None and capsule.provenance.format.value != "twin":
        raise UsageError(f"-o {output}: a pin is written into twin capsules only (this one is "
                         f"{capsule.provenance.format.value})")
    expected = expected_of(capsule)
    image = replayer.image(base)
    cands = candidates(capsule, base, cores, seeds)
    progress.say(f"trying {len(cands)} settings on {len({c.axis for c in cands})} axes, {how.pin_runs} runs to pin")

    # Go's package builds, Python's bytecode shared by every run (bisect's test-tool cache: build artefacts
    # only, test results never reused); "both ends seen" unlocks it from the first run: no end to fill it here
    cache = ToolCache()
    cache.end_seen("good", "not-reproduced")
    cache.end_seen("bad", "reproduced")

    def run(plan: Plan) -> bool:
        shared = cache.mounts(image.ref, None, plan)[1]
        return replayer.attempt(shared.apply(plan), image, expected, mounts=shared.mounts).classification == "recorded"

    tried, pin, over = search(capsule, base, cands, run, how, progress.say)
    runs = sum(t.rate.runs for t in tried)
    settings = pin.settings if pin is not None else FrozenMap[str, str]()
    rate = Rate.of(how.pin_runs, how.pin_runs, how.confidence) if pin is not None else None
    plan, _ = pinned(base, settings, capsule.provenance.path)
    written = None
    if pin is not None and output is not None:
        write_pinned(Path(capsule.provenance.path), settings, how.pin_runs, output)
        written = str(output)
    rerun = shlex.join(["replay", written or opened.name, *(["--repo", replayer.options.plan.repo]
                                                           if replayer.options.plan.repo else [])])
    return PinResult(opened.name, pin is not None, settings, rate, command_line(plan), rerun,
                     axis_rates(tried, how.confidence), tried, runs, time.monotonic() - start, over, written)


def write_pinned(source: Path, settings: FrozenMap[str, str], runs: int, output: Path) -> None:
    """The twin capsule again, with its pin: the settings as a "pin" member (replay reads and applies
    it: build/seeding.py) and, for a setting that is a variable, as a recorded env fact too."""
    try:
        doc: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CapsuleError(str(source), f"cannot be read again to write the pin ({exc})") from exc
    doc["pin"] = {"settings": dict(settings), "failed": runs, "runs": runs}
    env: dict[str, Any] = doc["env"] if isinstance(doc.get("env"), dict) else {}
    redaction = doc.get("redaction")
    included = redaction.get("valuesIncluded") if isinstance(redaction, dict) else None
    for name in (n for n in _ENV_SETTINGS if n in settings):
        env[name] = {"state": "set", "value": settings[name]}
        if isinstance(included, list) and name not in included:
            included.append(name)
    doc["env"] = env
    write_text(output, json.dumps(doc, indent=2) + "\n")

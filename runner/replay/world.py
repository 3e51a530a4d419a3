"""The world an attempt runs in, besides its image.

The recorded HTTP traffic (a sidecar on an internal network), the recorded clock
(libfaketime, its offset computed just before each run) and the recorded random
values (a file handed to each container through the engine). `replay CAPSULE` and every bisect trial use it, so both see
the same hermetic world. It knows nothing of the replayer: it hands out what each
attempt's container needs.
"""
from __future__ import annotations

import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from collections.abc import Callable

from ..build.clock import (RANDOM_VALUES_PATH, clock_limits_note, faketime_env, random_values_env,
                     random_values_file)
from ..config import Settings
from .deferred import signals_deferred
from ..engine import ContainerFile, Engine, Mount
from ..build.pins import with_build_rows
from ..build.plan import BaseImage, Fidelity, Plan

if TYPE_CHECKING:
    from ..httpreplay.served import HttpReport
    from ..httpreplay.session import HttpReplaySession


@dataclass(frozen=True)
class AttemptSettings:
    """What one attempt's container gets from the world."""

    env: tuple[tuple[str, str], ...] = ()
    mounts: tuple[Mount, ...] = ()
    network: str | None = None  # None: the plan's own (none, or bridge when its policy allows)
    dns_opts: tuple[str, ...] = ()
    dns: tuple[str, ...] = ()  # the replay network's own resolver
    files: tuple[ContainerFile, ...] = ()  # uploaded through the engine: no host path (replay may run in a container)


Sidecar = Callable[[BaseImage, Callable[[str], None]], tuple[str, str]]  # (its base, its image): the image service's


class World:
    def __init__(self, engine: Engine, settings: Settings, plan: Plan, label: str,
                 say: Callable[[str], None], sidecar: Sidecar) -> None:
        self.engine, self.settings, self.plan, self.label, self.say = engine, settings, plan, label, say
        self.sidecar = sidecar
        self._stack = ExitStack()
        self._session: HttpReplaySession | None = None
        self._env: tuple[tuple[str, str], ...] = ()
        self._files: tuple[ContainerFile, ...] = ()

    def __enter__(self) -> World:
        with ExitStack() as stack:
            stack.callback(self._stack.close)
            if self.plan.network == "replay":
                self._session = self._stack.enter_context(self._http_session())
            self._random_values()
            stack.pop_all()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        with signals_deferred():  # a signal now would leave the sidecar, its network or its rule behind
            self._stack.close()

    def attempt(self) -> AttemptSettings:
        """Settings for the next attempt; the clock offset is computed now, just before the run."""
        env = list(self._env)
        network: str | None = None
        dns_opts: tuple[str, ...] = ()
        dns: tuple[str, ...] = ()
        files = self._files
        if self._session is not None:
            self._session.begin_attempt()
            c = self._session.container_settings()
            env += list(c.env)
            network, dns_opts, dns, files = c.network, tuple(c.dns_opts), tuple(c.dns), (*files, *c.files)
        env += clock_env(self.plan)
        return AttemptSettings(tuple(env), (), network, dns_opts, dns, tuple(files))

    def http_report(self) -> HttpReport | None:
        return self._session.report() if self._session is not None else None

    def _http_session(self) -> HttpReplaySession:
        from ..httpreplay.session import HttpReplaySession, uses_java

        base_ref, image = self.sidecar(self.plan.base, self.say)
        return HttpReplaySession(self.engine, self.settings, self.plan.http_calls, self.label, base_ref, image=image,
                                 denied_hosts=self.plan.denied_hosts,
                                 say=self.say, ignore=self.plan.http_ignore,
                                 java=uses_java(self.plan.argv, [r.name for r in self.plan.runtimes]))

    def _random_values(self) -> None:
        """Recorded random values, in a documented file hook libraries read (REPLAY_RANDOM_VALUES)."""
        if not any(v.kind == "random" for v in self.plan.values):
            return
        with tempfile.TemporaryDirectory(prefix="replay-values-") as tmp:  # clock.py is the format's one writer
            data = random_values_file(self.plan.values, Path(tmp)).read_bytes()
        self._env = tuple(random_values_env())
        self._files = (ContainerFile(RANDOM_VALUES_PATH, data, 0o444),)


def clock_env(plan: Plan) -> list[tuple[str, str]]:
    return list(faketime_env(plan.clock_start)) if plan.clock_start else []


def clock_rows(plan: Plan) -> tuple[Fidelity, ...]:
    if not plan.clock_start:
        return (Fidelity("clock", "not recorded", "real time", "not applied", "the capsule records no clock"),)
    return (Fidelity("clock", plan.clock_start, plan.clock_start, "exact", clock_limits_note()),)


def replay_fidelity(plan: Plan, recorded_libc: str | None, image_libc: str | None,
                    unpinned: tuple[Fidelity, ...] = ()) -> tuple[Fidelity, ...]:
    """The one fidelity table of a replay: the plan's rows (a package the build could not pin replaced
    by the build's row), the glibc of the image, the clock. `replay` fills in what the built image
    said; the CI summary, which builds nothing, the base image's own glibc."""
    return with_build_rows(plan.fidelity, unpinned) + _libc_rows(recorded_libc, image_libc) + clock_rows(plan)


def _libc_rows(recorded: str | None, image_libc: str | None) -> tuple[Fidelity, ...]:
    """The glibc the built image really has, checked against the capsule."""
    found = image_libc or "unknown"
    if recorded is None:
        return (Fidelity("libc in the image", "not recorded", f"glibc {found}", "approximated",
                         "the capsule records no libc"),)
    exact = recorded == image_libc
    return (Fidelity("libc in the image", f"glibc {recorded}", f"glibc {found}", "exact" if exact else "approximated",
                     "checked inside the built image" + ("" if exact else "; no base image offers that version")),)

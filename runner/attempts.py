"""Running attempts: everything the run side needs besides the image.

The recorded HTTP traffic (a sidecar on an internal network), the recorded clock
(libfaketime, its offset computed just before each run) and the recorded random
values (a mounted file). Used by `replay CAPSULE` and by every bisect trial, so
both see the same hermetic world.
"""
from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine import Mount
from .plan import Fidelity, Plan

if TYPE_CHECKING:
    from .httpreplay.report import HttpReport
    from .replay import Attempt, BuiltImage, Expected, Progress, Replayer


def run_attempts(replayer: Replayer, plan: Plan, image: BuiltImage, expected: Expected | None, count: int,
                 progress: Progress, label_steps: bool = True) -> tuple[list[Attempt], HttpReport | None]:
    attempts: list[Attempt] = []
    http: HttpReport | None = None
    with ExitStack() as stack:
        session = stack.enter_context(_http_session(replayer, plan, progress)) if plan.network == "replay" else None
        extra_env, mounts = _random_values(plan, stack)
        for i in range(count):
            env, kw = list(extra_env), {"mounts": mounts}
            if session is not None:
                session.begin_attempt()
                c = session.container_settings()
                env += list(c.env)
                kw = {"network": c.network, "dns": c.dns, "dns_opts": c.dns_opts, "mounts": (*mounts, *c.mounts)}
            env += clock_env(plan)  # just before the run: the offset is to "now"
            spec = replayer.run_spec(plan, image, extra_env=env, **kw)
            if label_steps:
                with progress.step(f"attempt {i + 1}/{count}"):
                    attempts.append(replayer.run_one(plan, image, expected, spec))
            else:
                attempts.append(replayer.run_one(plan, image, expected, spec))
        if session is not None:
            http = session.report()
    return attempts, http


def _http_session(replayer: Replayer, plan: Plan, progress: Progress) -> Any:
    from .baseimage import base_ref
    from .httpreplay.session import HttpReplaySession

    return HttpReplaySession(replayer.engine, replayer.settings, plan.http_calls, replayer.label,
                             base_ref(replayer.settings, plan.base), denied_hosts=plan.denied_hosts,
                             say=progress.say)


def _random_values(plan: Plan, stack: ExitStack) -> tuple[list[tuple[str, str]], tuple[Mount, ...]]:
    """Recorded random values, in a documented file hook libraries read (REPLAY_RANDOM_VALUES)."""
    if not any(v.kind == "random" for v in plan.values):
        return [], ()
    from .clock import RANDOM_VALUES_PATH, random_values_env, random_values_file

    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="replay-values-")))
    path = random_values_file(plan.values, tmp)
    return list(random_values_env()), (Mount(str(path), RANDOM_VALUES_PATH, True),)


def clock_env(plan: Plan) -> list[tuple[str, str]]:
    if not plan.clock_start:
        return []
    from .clock import faketime_env

    return list(faketime_env(plan.clock_start))


def clock_rows(plan: Plan) -> tuple[Fidelity, ...]:
    if not plan.clock_start:
        return (Fidelity("clock", "not recorded", "real time", "not applied", "the capsule records no clock"),)
    from .clock import clock_limits_note

    return (Fidelity("clock", plan.clock_start, plan.clock_start, "exact", clock_limits_note()),)

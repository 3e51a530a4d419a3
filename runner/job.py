"""`replay CAPSULE`, the use case: verify, plan, build, run the attempts, judge."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .capsules import verify_capsule
import tempfile

from .engine import Mount
from .plan import Plan
from .replay import Attempt, BuiltImage, Progress, Replayer, ReplayOptions, judge
from .report import ReplayReport, verification_summary


def replay_capsule(path: Path, options: ReplayOptions, progress: Progress,
                   trust_keys: Sequence[Path] = ()) -> ReplayReport:
    replayer = Replayer(options, progress)
    try:
        with progress.step("verify capsule"):
            verified = verify_capsule(path, trust_keys)
        with progress.step("plan"):
            capsule, plan = replayer.load(path)
        expected = replayer.expected(capsule)
        image = replayer.image(plan)
        attempts, http = _attempts(replayer, plan, image, expected, progress)
        verdict = judge(expected, attempts, patched=bool(plan.source and plan.source.patch))
        notes = list(plan.notes)
        if image.context and image.context.restored:
            notes += list(image.context.restored.notes)
        if verified is not None and not verified.valid:
            notes.append("the capsule did not verify: see the verification problems")
        return ReplayReport(
            verdict=verdict,
            capsule={"path": str(path), "format": capsule.provenance.format.value, "id": plan.capsule_id},
            expected=expected, attempts=tuple(attempts), fidelity=plan.fidelity + _libc_rows(capsule.platform.libc_version, image) + _clock_rows(plan),
            steps=tuple(progress.timings),
            image={"ref": image.ref, "built": image.built, "build_s": round(image.build_s, 3), "steps_run": image.steps_run,
                   "builder": replayer.engine.builder_name, "base": plan.base.key},
            verification=verification_summary(verified), drift=image.drift, http=http, notes=tuple(notes),
        )
    finally:
        replayer.close()


def _attempts(replayer: Replayer, plan: Plan, image: BuiltImage, expected: Any,
              progress: Progress) -> tuple[list[Attempt], dict[str, Any] | None]:
    attempts: list[Attempt] = []
    http: dict[str, Any] | None = None
    with ExitStack() as stack:
        session = stack.enter_context(_http_session(replayer, plan, progress)) if plan.network == "replay" else None
        extra_env, mounts = _random_values(plan, stack)
        for i in range(replayer.options.attempts):
            env, kw = list(extra_env), {"mounts": mounts}
            if session is not None:
                session.begin_attempt()
                c = session.container_settings()
                env += list(c.env)
                kw = {"network": c.network, "dns_opts": c.dns_opts, "mounts": (*mounts, *c.mounts)}
            env += _clock_env(plan)  # computed just before the run: the offset is to "now"
            spec = replayer.run_spec(plan, image, extra_env=env, **kw)
            with progress.step(f"attempt {i + 1}/{replayer.options.attempts}"):
                attempts.append(replayer.attempt(plan, image, expected, spec))
        if session is not None:
            http = _http_summary(session.report())
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


def _http_summary(report: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(report):
        from .capsules.model import to_data

        return to_data(report)  # type: ignore[no-any-return]
    return dict(report)


def _clock_env(plan: Plan) -> list[tuple[str, str]]:
    if not plan.clock_start:
        return []
    from .clock import faketime_env

    return list(faketime_env(plan.clock_start))


def _libc_rows(recorded: str | None, image: BuiltImage) -> tuple[Any, ...]:
    """The glibc the built image really has, checked against the capsule."""
    from .plan import Fidelity

    found = image.libc_version or "unknown"
    if recorded is None:
        return (Fidelity("libc in the image", "not recorded", f"glibc {found}", "approximated",
                         "the capsule records no libc"),)
    exact = recorded == image.libc_version
    return (Fidelity("libc in the image", f"glibc {recorded}", f"glibc {found}", "exact" if exact else "approximated",
                     "checked inside the built image" + ("" if exact else "; no base image offers that version")),)


def _clock_rows(plan: Plan) -> tuple[Any, ...]:
    from .plan import Fidelity

    if not plan.clock_start:
        return (Fidelity("clock", "not recorded", "real time", "not applied", "the capsule records no clock"),)
    return (Fidelity("clock", plan.clock_start, plan.clock_start, "exact",
                     "libfaketime: applies to dynamically linked programs, not static binaries or Go"),)

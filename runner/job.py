"""`replay CAPSULE`, the use case: verify, plan, build, run the attempts, judge."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .attempts import clock_rows, run_attempts
from .capsules import verify_capsule
from .errors import CapsuleRefused
from .replay import BuiltImage, Progress, Replayer, ReplayOptions, judge
from .report import CapsuleRef, ImageInfo, ReplayReport, verification_of


def replay_capsule(path: Path, options: ReplayOptions, progress: Progress,
                   trust_keys: Sequence[Path] = ()) -> ReplayReport:
    replayer = Replayer(options, progress)
    try:
        with progress.step("verify capsule"):
            verified = verify_capsule(path, trust_keys)
        if options.require_valid and (not verified.valid or (trust_keys and verified.trusted is not True)):
            problem = next((p.message for p in verified.problems if p.severity == "error"),
                           "no valid signature from a trusted key")
            raise CapsuleRefused(f"{path}: does not verify ({problem}); not replayed (--require-valid)")
        with progress.step("plan"):
            capsule, plan = replayer.load(path)
        expected = replayer.expected(capsule)
        image = replayer.image(plan)
        attempts, http = run_attempts(replayer, plan, image, expected, replayer.options.attempts, progress)
        verdict = judge(expected, attempts, patched=bool(plan.source and plan.source.patch))
        notes = list(plan.notes)
        if image.context and image.context.restored:
            notes += list(image.context.restored.notes)
        if http is not None and (http.unmatched or http.unused):
            notes.append(f"the program's HTTP traffic diverged from the recording: {len(http.unmatched)} "
                         f"request(s) matched nothing, {len(http.unused)} recorded call(s) never made")
        if verified is not None and not verified.valid:
            notes.append("the capsule did not verify: see the verification problems")
        return ReplayReport(
            verdict=verdict, capsule=CapsuleRef(str(path), capsule.provenance.format.value, plan.capsule_id),
            expected=expected, attempts=tuple(attempts),
            fidelity=plan.fidelity + _libc_rows(capsule.platform.libc_version, image) + clock_rows(plan),
            image=ImageInfo(image.ref, image.built, image.build_s, image.steps_run, replayer.engine.builder_name,
                            plan.base.key),
            verification=verification_of(verified), steps=tuple(progress.timings), drift=image.drift,
            http=http, notes=tuple(notes),
        )
    finally:
        replayer.close()


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

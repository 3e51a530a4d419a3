"""`replay CAPSULE`, the use case: verify, plan, build, run the attempts, judge.

The capsule is read once: verification and planning share one parse.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..capsules import check_capsule
from ..capsules.verification import VerifyResult
from ..errors import CapsuleRefused
from ..outcome import judge
from ..plan import Fidelity
from ..report import CapsuleRef, ImageInfo, ReplayReport, Step, verification_of
from .image import BuiltImage
from .options import ReplayOptions
from .progress import Progress
from .replayer import Replayer
from .world import clock_rows


def replay_capsule(path: Path, options: ReplayOptions, progress: Progress,
                   trust_keys: Sequence[Path] = ()) -> ReplayReport:
    replayer = Replayer(options, progress)
    try:
        with progress.step("verify capsule"):
            capsule, verified = check_capsule(path, trust_keys)
        refuse_unless_valid(path, verified, options.require_valid, trust_keys)
        with progress.step("plan"):
            capsule, plan = replayer.plan(capsule)
        expected = replayer.expected(capsule)
        image = replayer.image(plan)
        attempts, http = replayer.attempts(plan, image, expected, replayer.options.attempts)
        verdict = judge(expected, attempts, patched=bool(plan.source and plan.source.patch))
        notes = list(plan.notes)
        if image.context and image.context.restored:
            notes += list(image.context.restored.notes)
        if image.context and image.built:
            notes += list(image.context.notes)
        if http is not None and (http.unmatched or http.unused):
            notes.append(f"the program's HTTP traffic diverged from the recording: {len(http.unmatched)} "
                         f"request(s) matched nothing, {len(http.unused)} recorded call(s) never made")
        if not verified.valid:
            notes.append("the capsule did not verify: see the verification problems")
        return ReplayReport(
            verdict=verdict, capsule=CapsuleRef(str(path), capsule.provenance.format.value, plan.capsule_id),
            expected=expected, attempts=tuple(attempts),
            fidelity=plan.fidelity + _libc_rows(capsule.platform.libc_version, image) + clock_rows(plan),
            image=ImageInfo(image.ref, image.built, image.build_s, image.steps_run, replayer.engine.builder_name,
                            plan.base.key),
            verification=verification_of(verified), steps=tuple(Step(n, s) for n, s in progress.timings), drift=image.drift,
            http=http, notes=tuple(notes),
        )
    finally:
        replayer.close()


def refuse_unless_valid(path: Path, verified: VerifyResult, require_valid: bool, trust_keys: Sequence[Path]) -> None:
    if require_valid and (not verified.valid or (trust_keys and verified.trusted is not True)):
        problem = next((p.message for p in verified.problems if p.severity == "error"),
                       "no valid signature from a trusted key")
        raise CapsuleRefused(f"{path}: does not verify ({problem}); not replayed (--require-valid)")


def _libc_rows(recorded: str | None, image: BuiltImage) -> tuple[Fidelity, ...]:
    """The glibc the built image really has, checked against the capsule."""
    found = image.libc_version or "unknown"
    if recorded is None:
        return (Fidelity("libc in the image", "not recorded", f"glibc {found}", "approximated",
                         "the capsule records no libc"),)
    exact = recorded == image.libc_version
    return (Fidelity("libc in the image", f"glibc {recorded}", f"glibc {found}", "exact" if exact else "approximated",
                     "checked inside the built image" + ("" if exact else "; no base image offers that version")),)

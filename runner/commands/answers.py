"""The typed results of the commands that read (inspect, verify, diff, signature, render, doctor,
gc, version, capture): each holds what its stage returned and says its exit code, its --json
result, its text view and its JSON Schema (outputs.py says what a result is)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import Exit, ReplayError
from ..schemas.derive import BOOL, INT, STR, Derive, array, nullable, obj
from .outputs import Answer, Screen

if TYPE_CHECKING:
    from ..capsules.model import Capsule
    from ..capsules.verification import VerifyResult
    from ..capture import Captured, CapsuleNotWritten
    from ..facts.diff import CapsuleDiff
    from ..machine.doctor import Diagnosis
    from ..machine.cleanup import GcResult
    from ..outcome.runreport import Rendered
    from ..verdict.signature import FailureSignature


@dataclass(frozen=True)
class Inspected(Answer):
    model: Capsule
    about = ": the capsule model"

    @property
    def exit_code(self) -> int:
        return int(Exit.OK)

    def data(self) -> Any:
        from ..codec import encode

        return encode(self.model)

    def show(self, screen: Screen) -> None:
        from ..report.inspect_view import show_inspect

        show_inspect(self.model, screen.out, full=screen.full)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..capsules.model import Capsule

        return d.root(Capsule)


@dataclass(frozen=True)
class Verified(Answer):
    result: VerifyResult
    keys_given: bool  # asking to trust keys and getting no trusted signature is a negative answer too

    @property
    def ok(self) -> bool:
        return self.result.valid and (not self.keys_given or self.result.trusted is True)

    @property
    def exit_code(self) -> int:
        return int(Exit.OK if self.ok else Exit.NEGATIVE)

    def data(self) -> Any:
        from ..report.verify_view import verify_data

        return verify_data(self.result, self.ok)

    def show(self, screen: Screen) -> None:
        from ..report.verify_view import show_verify

        show_verify(self.result, self.ok, screen.out)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..capsules.verification import VerifyResult

        return d.root(VerifyResult, {"valid": BOOL, "trusted": nullable(BOOL)})


@dataclass(frozen=True)
class Compared(Answer):
    a: Capsule
    b: Capsule
    diff: CapsuleDiff
    carry: Sequence[str]  # the options this diff was given, carried into the command it prints next

    @property
    def exit_code(self) -> int:
        return int(Exit.NEGATIVE if self.diff.differ else Exit.OK)

    def data(self) -> Any:
        from ..facts.diff import diff_to_data

        return diff_to_data(self.diff, self.a, self.b, self.carry)

    def show(self, screen: Screen) -> None:
        from ..report.diff_view import show_diff

        show_diff(self.a, self.b, self.diff, screen.out, show_all=screen.full, carry=self.carry)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        outcome = obj({"failed": BOOL, "exit_code": nullable(INT), "signal": nullable(STR),
                       "signature": nullable(STR)})
        side = obj({"path": STR, "format": STR, "outcome": outcome})
        fact = obj({"key": STR, "group": STR, "a": {}, "b": {}, "a_shown": STR, "b_shown": STR,
                    "could_change_outcome": BOOL, "note": nullable(STR), "score": INT, "evidence": STR,
                    "follows": nullable(STR)})
        lone = obj({"key": STR, "group": STR, "recorded_in": {"enum": ["a", "b"]}, "value": {}, "shown": STR,
                    "note": STR})
        caveat = obj({"key": STR, "a": {}, "b": {}, "note": STR})
        step = obj({"argv": nullable(array(STR)), "command": nullable(STR), "why": STR})
        return obj({"a": side, "b": side, "differ": BOOL, "outcome_keys": array(STR), "differences": array(fact),
                    "not_comparable": array(lone), "equal_without_values": array(caveat), "next": step})


@dataclass(frozen=True)
class Signed(Answer):
    result: FailureSignature
    exit_code_given: int | None
    signal: str | None

    @property
    def exit_code(self) -> int:
        return int(Exit.OK)

    def data(self) -> Any:
        return {"signature": self.result.signature, "key_lines": list(self.result.key_lines),
                "exit_code": self.exit_code_given, "signal": self.signal}

    def show(self, screen: Screen) -> None:
        from ..report.signature_view import show_signature

        show_signature(self.result, screen.out)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        return obj({"signature": STR, "key_lines": array(STR), "exit_code": nullable(INT), "signal": nullable(STR)})


@dataclass(frozen=True)
class RenderedAnswer(Answer):
    rendered: Rendered

    @property
    def exit_code(self) -> int:
        return int(Exit.OK)

    def data(self) -> Any:
        return self.rendered.json()

    def show(self, screen: Screen) -> None:
        from ..report.render_view import show_rendered

        show_rendered(self.rendered, screen.out, screen.err)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        return obj({"dockerfile": STR, "builder": {"enum": ["classic", "buildkit"]}, "notes": array(STR),
                    "context": nullable(STR), "build_line": nullable(STR), "run_line": nullable(STR)})


@dataclass(frozen=True)
class Diagnosed(Answer):
    diagnosis: Diagnosis

    @property
    def exit_code(self) -> int:
        return self.diagnosis.exit_code

    def data(self) -> Any:
        from ..report.doctor_view import doctor_data

        return doctor_data(self.diagnosis)

    def show(self, screen: Screen) -> None:
        from ..report.doctor_view import show_doctor

        show_doctor(self.diagnosis, screen.out)

    def problem(self) -> ReplayError | None:
        """On exit 3 no result: the error names each failed check and its fix."""
        return self.diagnosis.problem()

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..config import Origin
        from ..machine.doctor import Check

        return obj({"ready": BOOL, "versions": {"type": "object", "additionalProperties": nullable(STR)},
                    "checks": array(d.of(Check)), "settings": array(d.of(Origin))})


@dataclass(frozen=True)
class Collected(Answer):
    result: GcResult

    @property
    def exit_code(self) -> int:
        return self.result.exit_code

    def data(self) -> Any:
        from ..report.gc_view import gc_data

        return gc_data(self.result)

    def show(self, screen: Screen) -> None:
        from ..report.gc_view import show_gc
        from ..textsafe import shown

        show_gc(self.result, screen.out)
        for p in self.result.problems:
            screen.err.print(f"replay: error: {shown(p, 1000)}", markup=False, highlight=False)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..machine.disk import Sweep
        from ..machine.gc import Leftover

        return obj({"dry_run": BOOL, "leftovers": array(d.of(Leftover)), "problems": array(STR),
                    "images": nullable(d.of(Sweep)), "cache": nullable(d.of(Sweep)), "freed": INT})


@dataclass(frozen=True)
class Versioned(Answer):
    version: str

    @property
    def exit_code(self) -> int:
        return int(Exit.OK)

    def data(self) -> Any:
        return {"version": self.version}

    def show(self, screen: Screen) -> None:
        screen.out.print(f"replay {self.version}", markup=False, highlight=False)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        return obj({"version": STR})


@dataclass(frozen=True)
class CaptureAnswer(Answer):
    captured: Captured
    about = " (the envelope's exit_code is the command's own)"

    @property
    def exit_code(self) -> int:
        return self.captured.result.shell_code  # the recorded command's own code: a CI step keeps its meaning

    def data(self) -> Any:
        from ..report.capture_view import capture_data

        return capture_data(self.captured)

    def show(self, screen: Screen) -> None:
        from ..report.capture_view import closing_lines

        if not screen.quiet:
            for line in closing_lines(self.captured):
                screen.err.print(line, markup=False, highlight=False)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        return obj({"written": nullable(STR), "failed": BOOL, "exit_code": nullable(INT), "signal": nullable(STR),
                    "signature": nullable(STR), "redacted": {"type": "object", "additionalProperties": INT},
                    "diff_omitted": array(STR), "values_not_recorded": array(STR)})


def not_written_exit(exc: CapsuleNotWritten) -> int:
    """capture's exit when the capsule could not be written: the command's own code when it failed
    (its meaning wins), else 3."""
    return exc.run_code if exc.run_code != 0 else int(Exit.ENVIRONMENT)

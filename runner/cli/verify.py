"""`replay verify CAPSULE`: integrity and seal of a capsule; the answer first, then every problem."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from ..build.precheck import CONTENT_CHECKS
from ..capsules.opening import verification
from ..capsules.trust import check_trust_key
from ..codec import encode
from ..capsules.verification import Signer, VerifyResult
from ..errors import Exit, UsageError
from ..facts.inspect import printable
from ..report.layout import Styled, View
from . import console
from .options import CapsuleArg

def _trusted(s: Signer) -> str:
    return "not checked" if s.trusted is None else ("yes" if s.trusted else "no")


def _signers_table(view: View, result: VerifyResult) -> None:
    view.table("signers", ("keyid", "algorithm", "subject", "signature valid", "trusted"),
               [(printable(s.keyid or "-"), s.algorithm, printable(s.subject or "-"),
                 Styled("yes", "green") if s.signature_valid else Styled("no", "red"), _trusted(s))
                for s in result.signers], free=2, shorten=False)


def answer(result: VerifyResult, ok: bool) -> str:
    """The first line: valid / INVALID with the count of problems, then what was checked."""
    errors = sum(1 for p in result.problems if p.severity == "error")
    warnings = sum(1 for p in result.problems if p.severity == "warning")
    if ok:
        verdict = "valid"
    elif errors:
        verdict = f"INVALID: {errors} problem{'s' if errors != 1 else ''}"
    else:
        verdict = "INVALID: no valid signature from a trusted key"
    if warnings:
        verdict += f" ({warnings} warning{'s' if warnings != 1 else ''})"
    sealed = "yes" if result.sealed else "no"
    return f"{verdict}: {printable(result.path)} ({result.format}), sealed: {sealed}"


def _show(result: VerifyResult, ok: bool) -> None:
    console.out.print(Text(answer(result, ok), "bold green" if ok else "bold red"))
    for p in result.problems:
        where = f" [{p.where}]" if p.where else ""
        style = {"error": "red", "warning": "yellow"}.get(p.severity, "")
        console.out.print(Text(f"  {p.severity}: {printable(p.message)}{printable(where)}", style))
    for check in result.checks:
        console.out.print(Text(f"  checked: {printable(check)}"))
    if result.signers:
        _signers_table(View(console.out), result)


def _twin_fix_hint(capsule: str, patch: Path | None, ref: str | None) -> str:
    """twin's `verify --patch F` checks a fix; here that is `replay CAPSULE --patch F`."""
    option = f"--patch {patch}" if patch is not None else f"--ref {ref}"
    return (f"verify {option}: replay verify checks a capsule's integrity; to check a fix (twin's verify), "
            f"run `replay {shlex.quote(str(capsule))} {option}`")


def _data(result: VerifyResult, ok: bool) -> dict[str, Any]:
    return {"valid": ok, "trusted": result.trusted, **encode(result)}


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_command(
        capsule: CapsuleArg,
        trust_key: Annotated[
            list[Path] | None, typer.Option("--trust-key", help="PEM public key to trust (repeatable); with it, exit 1 unless a valid signature comes from one of them.")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
        patch: Annotated[Path | None, typer.Option("--patch", hidden=True, help="twin's habit: see replay CAPSULE --patch.")] = None,
        ref: Annotated[str | None, typer.Option("--ref", hidden=True, help="twin's habit: see replay CAPSULE --ref.")] = None,
    ) -> None:
        """Check a capsule's integrity (digests, id, seal); exit 1 when it is invalid. `-`: a JSON capsule on stdin."""
        if patch is not None or ref is not None:
            raise UsageError(_twin_fix_hint(capsule, patch, ref))
        keys = tuple(check_trust_key(k) for k in trust_key or ())
        result = verification(capsule, keys, content_checks=CONTENT_CHECKS)  # named as given; refuses nothing
        # Asking to trust keys and getting no trusted signature is a negative answer too.
        ok = result.valid and (not keys or result.trusted is True)
        if as_json:
            console.print_result("verify", int(Exit.OK if ok else Exit.NEGATIVE), _data(result, ok))
        else:
            _show(result, ok)
        if not ok:
            raise typer.Exit(int(Exit.NEGATIVE))

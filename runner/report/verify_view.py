"""`replay verify`'s text: the answer first (valid / INVALID, what was checked), then every problem and signer."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..codec import encode
from ..capsules.verification import Signer, VerifyResult
from ..facts.inspect import printable
from .layout import Styled, View

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


def show_verify(result: VerifyResult, ok: bool, out: Console) -> None:
    out.print(Text(answer(result, ok), "bold green" if ok else "bold red"))
    for p in result.problems:
        where = f" [{p.where}]" if p.where else ""
        style = {"error": "red", "warning": "yellow"}.get(p.severity, "")
        out.print(Text(f"  {p.severity}: {printable(p.message)}{printable(where)}", style))
    for check in result.checks:
        out.print(Text(f"  checked: {printable(check)}"))
    if result.signers:
        _signers_table(View(out), result)


def verify_data(result: VerifyResult, ok: bool) -> dict[str, Any]:
    return {"valid": ok, "trusted": result.trusted, **encode(result)}

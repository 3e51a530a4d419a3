"""`replay verify CAPSULE`: integrity and seal of a capsule, every problem listed."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from rich import box
from rich.table import Table
from rich.text import Text

from ..capsules import verify_capsule
from ..capsules.model import to_data
from ..capsules.verification import Signer, VerifyResult
from ..errors import Exit, UsageError
from ..facts.inspect import printable
from . import console
from .options import CapsuleArg

_MAX_KEY_BYTES = 64 * 1024  # a PEM public key is a few hundred bytes


def check_trust_key(path: Path) -> Path:
    """The path, when it names a PEM public key (or certificate); UsageError otherwise.

    Checked here, before any capsule is read, so a typo in a key path is a usage
    error and not a silently untrusted capsule.
    """
    if not path.is_file():
        raise UsageError(f"--trust-key {path}: no such file")
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_KEY_BYTES + 1)
    except OSError as e:
        raise UsageError(f"--trust-key {path}: cannot read: {e.strerror or e}") from None
    if len(data) > _MAX_KEY_BYTES or not _is_pem_key(data):
        raise UsageError(f"--trust-key {path}: not a PEM public key")
    return path


def _is_pem_key(data: bytes) -> bool:
    for load in (load_pem_public_key, x509.load_pem_x509_certificate):
        try:
            load(data)
            return True
        except Exception:  # cryptography raises ValueError, TypeError or UnsupportedAlgorithm
            continue
    return False


def _trusted(s: Signer) -> str:
    return "not checked" if s.trusted is None else ("yes" if s.trusted else "no")


def _signers_table(result: VerifyResult) -> Table:
    table = Table(title="signers", title_justify="left", title_style="bold", box=box.SIMPLE)
    for name in ("keyid", "algorithm", "subject", "signature valid", "trusted"):
        table.add_column(name, overflow="fold")
    for s in result.signers:
        valid = Text("yes", "green") if s.signature_valid else Text("no", "red")
        keyid, subject = Text(printable(s.keyid or "-")), Text(printable(s.subject or "-"))
        table.add_row(keyid, s.algorithm, subject, valid, _trusted(s))
    return table


def _show(result: VerifyResult, ok: bool) -> None:
    sealed = "yes" if result.sealed else "no"
    console.out.print(Text(f"{printable(result.path)} ({result.format}), sealed: {sealed}"))
    for check in result.checks:
        console.out.print(Text(f"  checked: {printable(check)}"))
    for p in result.problems:
        where = f" [{p.where}]" if p.where else ""
        style = {"error": "red", "warning": "yellow"}.get(p.severity, "")
        console.out.print(Text(f"  {p.severity}: {printable(p.message)}{printable(where)}", style))
    if result.signers:
        console.out.print(_signers_table(result))
    verdict = "valid" if ok else "INVALID"
    if result.valid and not ok:
        verdict += " (no valid signature from a trusted key)"
    console.out.print(Text(verdict, "bold green" if ok else "bold red"))


def _data(result: VerifyResult, ok: bool) -> dict[str, Any]:
    return {"valid": ok, "trusted": result.trusted, **to_data(result)}


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_command(
        capsule: CapsuleArg,
        trust_key: Annotated[
            list[Path] | None, typer.Option("--trust-key", help="PEM public key to trust (repeatable); with it, exit 1 unless a valid signature comes from one of them.")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    ) -> None:
        """Check a capsule's integrity (digests, id, seal); exit 1 when it is invalid."""
        keys = tuple(check_trust_key(k) for k in trust_key or ())
        result = verify_capsule(capsule, keys)
        # Asking to trust keys and getting no trusted signature is a negative answer too.
        ok = result.valid and (not keys or result.trusted is True)
        if as_json:
            console.print_result("verify", int(Exit.OK if ok else Exit.NEGATIVE), _data(result, ok))
        else:
            _show(result, ok)
        if not ok:
            raise typer.Exit(int(Exit.NEGATIVE))

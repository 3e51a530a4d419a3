"""`replay signature`'s text: the key lines, then the signature alone on the last line."""
from __future__ import annotations

from rich.console import Console

from ..textsafe import escaped
from ..verdict import signature as sig


def show_signature(result: sig.FailureSignature, out: Console) -> None:
    lines = result.key_lines
    if not lines:
        out.print("key lines: none (the output is empty)")
    elif any(sig.is_key_line(line) for line in lines):
        out.print(f"key lines ({len(lines)}):")
    else:
        out.print(f"key lines (the last {len(lines)}; none looks like an error):")
    for line in lines:
        out.print(f"  {escaped(line)}", markup=False)  # output is untrusted: a bare ESC, a bell, a bidi override
    out.print(result.signature, markup=False)

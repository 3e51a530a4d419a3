"""`replay signature`'s text: the key lines, then the signature alone on the last line."""
from __future__ import annotations

import re

from rich.console import Console

from ..verdict import signature as sig

# Output is untrusted: a key line may still hold control characters (a bare ESC, a bell)
# that would drive the user's terminal if printed as they are.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def show_signature(result: sig.FailureSignature, out: Console) -> None:
    lines = result.key_lines
    if not lines:
        out.print("key lines: none (the output is empty)")
    elif any(sig.is_key_line(line) for line in lines):
        out.print(f"key lines ({len(lines)}):")
    else:
        out.print(f"key lines (the last {len(lines)}; none looks like an error):")
    for line in lines:
        out.print(f"  {_printable(line)}", markup=False)
    out.print(result.signature, markup=False)


def _printable(line: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", line)

"""`replay signature`: the failure signature of a command's output, as twin computes it."""
from __future__ import annotations

from ..commands.spec import Args
from ..errors import UsageError
from ..report.signature import show_signature
from ..verdict import signature as sig
from ..verdict.output import read_output, signal_name
from .console import err, out, print_result


def signature(a: Args) -> int:
    name = signal_name(a.signal)
    if (a.exit_code is None) == (name is None):
        raise UsageError("give exactly one of --exit-code N or --signal NAME")
    result = sig.compute(read_output(a.file, lambda line: err.print(line, markup=False)), a.exit_code, name)
    if a.json:
        print_result("signature", 0, {"signature": result.signature, "key_lines": list(result.key_lines),
                                      "exit_code": a.exit_code, "signal": name})
    else:
        show_signature(result, out)
    return 0

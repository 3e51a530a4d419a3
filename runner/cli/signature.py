"""`replay signature`: the failure signature of a command's output, as twin computes it."""
from __future__ import annotations

from ..commands.answers import Signed
from ..commands.arguments import SignatureArgs
from ..errors import UsageError
from ..verdict import signature as sig
from ..verdict.output import read_output, signal_name
from .console import err


def signature(a: SignatureArgs) -> Signed:
    name = signal_name(a.signal)
    if (a.exit_code is None) == (name is None):
        raise UsageError("give exactly one of --exit-code N or --signal NAME")
    result = sig.compute(read_output(a.file, lambda line: err.print(line, markup=False)), a.exit_code, name)
    return Signed(result, a.exit_code, name)

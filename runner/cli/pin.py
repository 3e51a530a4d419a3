"""`replay pin CAPSULE` (the use case: pinning/pinrun.py; the text: report/pinned.py)."""
from __future__ import annotations

from ..commands.arguments import PinArgs
from ..commands.replayed import Pinned
from ..pinning.pinrun import pin_command
from . import console


def pin(a: PinArgs) -> Pinned:
    return Pinned(pin_command(a.values, console.err, quiet=a.quiet or a.json))

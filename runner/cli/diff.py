"""`replay diff A B`: both recorded outcomes, the facts that could change them, the command to run next."""
from __future__ import annotations

from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..commands.answers import Compared
from ..commands.arguments import DiffArgs
from ..facts.diff import diff_capsules
from ..replay.inputs import carried


def diff(a: DiffArgs) -> Compared:
    ca, cb = (open_capsule(c, Trust().showing()).shown for c in (a.a, a.b))  # named as given; nothing refused
    # the next command works as printed: the options this diff was given
    return Compared(ca, cb, diff_capsules(ca, cb), carried(a.values))

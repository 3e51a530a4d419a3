"""`replay diff A B`: both recorded outcomes, the facts that could change them, the command to run next."""
from __future__ import annotations

from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..commands.spec import Args
from ..errors import Exit
from ..facts.diff import diff_capsules, diff_to_data
from ..replay.inputs import carried
from ..report.diff import show_diff
from . import console


def diff(a: Args) -> int:
    ca, cb = (open_capsule(c, Trust().showing()).shown for c in (a.a, a.b))  # named as given; nothing refused
    d = diff_capsules(ca, cb)
    code = int(Exit.NEGATIVE if d.differ else Exit.OK)
    carry = carried(a.values)  # the next command works as printed: the options this diff was given
    if a.json:
        console.print_result("diff", code, diff_to_data(d, ca, cb, carry))
    else:
        show_diff(ca, cb, d, console.out, show_all=a.show_all or a.verbose, carry=carry)
    return code

"""`replay diff A B`: both recorded outcomes, the facts that could change them, the command to run next."""
from __future__ import annotations

from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..commands.spec import Args
from ..errors import Exit
from ..facts.diff import diff_capsules, diff_to_data
from ..report.diff import show_diff
from . import console


def diff(a: Args) -> int:
    ca, cb = (open_capsule(c, Trust().showing()).shown for c in (a.a, a.b))  # named as given; nothing refused
    d = diff_capsules(ca, cb)
    code = int(Exit.NEGATIVE if d.differ else Exit.OK)
    if a.json:
        console.print_result("diff", code, diff_to_data(d, ca, cb))
    else:
        show_diff(ca, cb, d, console.out, show_all=a.show_all or a.verbose)
    return code

"""`replay inspect CAPSULE`: what a capsule records, group by group."""
from __future__ import annotations

from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..codec import encode
from ..commands.spec import Args
from ..report.inspect import show_inspect
from . import console


def inspect(a: Args) -> int:
    model = open_capsule(a.capsule, Trust().showing()).shown  # named as given: the URL, <stdin>, the path
    if a.json:
        console.print_result("inspect", 0, encode(model))
    else:
        show_inspect(model, console.out, full=a.show_all or a.verbose)
    return 0

"""`replay inspect CAPSULE`: what a capsule records, group by group."""
from __future__ import annotations

from ..capsules.opening import open_capsule
from ..capsules.trust import Trust
from ..commands.answers import Inspected
from ..commands.arguments import InspectArgs


def inspect(a: InspectArgs) -> Inspected:
    return Inspected(open_capsule(a.capsule, Trust().showing()).shown)  # named as given: the URL, <stdin>, the path

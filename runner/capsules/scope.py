"""What a format records at all: each reader says it of its own format (its `SCOPE`), so that a
group a format never records reads "not recorded by this format" instead of looking empty,
and a fact a format records even when missing (twin lists every runtime it found) can be told
from one it does not record (NovaFabric records no distro)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    """`groups`: the kinds of facts the format records at all. A fact key matching `absence` is
    recorded even when missing; `unless`: keys the recorder leaves out on purpose. Any other
    key is recorded only where present."""

    groups: frozenset[str]
    absence: tuple[str, ...]
    unless: tuple[str, ...] = ()


def pm_keys(*names: str) -> tuple[str, ...]:
    """The fact keys of these package managers (the tool, its version's parts, its lockfile)."""
    return tuple(k for n in names for k in (f"tool:{n}", f"tool:{n}:*", f"lock:{n}"))

"""Which of two capsules' differences bear on the outcome, by evidence, as replay's why list
ranks its causes (docs/diff.md): a variable by the command line reading it, the recorded output
naming it and a tool the command runs documenting it (evidence.py); a runtime or tool by the
command running it. A difference that follows from another is hung under it: tools installed
under the home directory (rustup's rustc and cargo, deno, bun...) found on one side only, or at
another version, when HOME itself differs, are what the move broke, not a cause of their own.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..capsules.model import Capsule
from .evidence import EnvEvidence, env_score, tools_run
from .reads import command_reads

HOME = "env:HOME"
# Installed under the home directory by their own installers (~/.cargo, ~/.rustup, ~/.deno, ~/.bun, ~/.local).
UNDER_HOME = frozenset({"rustc", "cargo", "rustup", "rustfmt", "clippy", "rust", "deno", "bun", "poetry", "pipx",
                        "nvm", "pyenv", "rbenv", "volta", "fnm"})
RUNS, NOT_RUN, PACKAGE, SOURCE, OTHER = 20, 3, 10, 30, 10


@dataclass(frozen=True)
class Bearing:
    score: int
    evidence: str
    follows: str | None = None  # the key this difference follows from


class Differing(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def could_change_outcome(self) -> bool: ...


D = TypeVar("D", bound=Differing)


def rank(diffs: Sequence[D], a: Capsule, b: Capsule, mark: Callable[[D, Bearing], D]) -> list[D]:
    """The differences in their order, each with its bearing written in by `mark`."""
    keys = {d.key for d in diffs}
    ev = _evidence(a, b)
    ran = ev.tools | {os.path.basename(w) for w in (*a.command.argv, *b.command.argv)}
    return [mark(d, _bearing(d, keys, ev, ran)) for d in diffs]


def by_evidence(diffs: Sequence[D]) -> list[D]:
    """The outcome-changing differences by score (stable), each followed by the ones that follow
    from it: how the text lists them."""
    under: dict[str, list[D]] = {}
    for f in diffs:  # grouped once: a capsule at the caps differs in thousands of facts
        if (key := _follows(f)) is not None:
            under.setdefault(key, []).append(f)
    out: list[D] = []
    for d in sorted((d for d in diffs if d.could_change_outcome), key=lambda d: -_score(d)):
        out += [d, *under.get(d.key, ())]
    return out


def _score(d: Differing) -> int:
    return int(getattr(d, "score", 0))


def _follows(d: Differing) -> str | None:
    follows = getattr(d, "follows", None)
    return follows if isinstance(follows, str) else None


def _evidence(a: Capsule, b: Capsule) -> EnvEvidence:
    argv = [*a.command.argv, *b.command.argv]
    return EnvEvidence(tools_run(a.command.argv) | tools_run(b.command.argv), command_reads(argv),
                       "\n".join(_output(c) for c in (a, b)))


def _output(c: Capsule) -> str:
    f = c.command.failure
    parts = [*(f.key_lines if f else ()), (f.output_tail or "") if f else ""]
    for body in (c.command.stdout, c.command.stderr):
        if body is not None:
            parts.append(body.data[-65536:].decode("utf-8", "replace"))
    return "\n".join(parts)


def _bearing(d: Differing, keys: set[str], ev: EnvEvidence, ran: frozenset[str]) -> Bearing:
    kind, _, name = d.key.partition(":")
    if kind in ("runtime", "tool") and name in UNDER_HOME and HOME in keys:
        return Bearing(0, f"follows from {HOME}: {name} is installed under the home directory", HOME)
    if kind == "env":
        score, said = env_score(name, ev, ("", 0))
        if d.key == HOME and any(k.partition(":")[2] in UNDER_HOME for k in keys if k.startswith(("runtime:", "tool:"))):
            score, said = score + 25, "; ".join(filter(None, ["tools under it differ with it", said]))
        return Bearing(score, said)
    if kind in ("runtime", "tool"):
        runs = name in ran
        return Bearing(RUNS if runs else NOT_RUN, f"the command runs {name}" if runs else "")
    if kind == "pin":
        return Bearing(PACKAGE, "")
    if kind == "source":
        return Bearing(SOURCE, "the code that ran")
    return Bearing(OTHER, "")


def marked_outcome(could: bool, bearing: Bearing) -> bool:
    """Whether a difference could change the outcome once its bearing is known: one that follows
    from another cannot by itself; HOME can when tools under it differ with it."""
    if bearing.follows is not None:
        return False
    return could or bearing.evidence.startswith("tools under it differ")


def replace_bearing(d: D, bearing: Bearing) -> D:
    """`mark` for dataclass differences with `score`, `evidence`, `follows` and `could_change_outcome`."""
    return dataclasses.replace(d, score=bearing.score, evidence=bearing.evidence,  # type: ignore[type-var]
                               follows=bearing.follows,
                               could_change_outcome=marked_outcome(d.could_change_outcome, bearing))

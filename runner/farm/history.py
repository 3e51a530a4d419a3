"""What changed between two nights: the "since last night" list (pure).

A transition says its before and after states once (`before` is "new" on a capsule's
first night); its detail adds only what the two states do not say (the reason a capsule
broke, how the signature moved, the REF).
"""
from __future__ import annotations

from typing import Protocol

from ..verdict.facts import REPRODUCES, FarmVerdict, TransitionKind, Verdict
from .model import CapsuleResult, Night, Transition


class Prior(Protocol):
    """What a transition reads of the night before: a full result or the store's light mark."""

    @property
    def verdict(self) -> FarmVerdict: ...
    @property
    def signature(self) -> str | None: ...
    @property
    def ref(self) -> str | None: ...
    @property
    def ref_verdict(self) -> Verdict | None: ...


def transitions(before: Night | None, after: Night) -> tuple[Transition, ...]:
    """One transition per capsule whose recorded-commit state changed, one more when its
    verdict at REF did; capsules gone since `before` are not listed (nothing to say now)."""
    old = {r.capsule_id: r for r in (before.results if before else ())}
    out: list[Transition] = []
    for new in after.results:
        prev = old.get(new.capsule_id)
        moved = recorded_side(prev, new)
        if moved is not None:
            out.append(moved)
        fixed = ref_side(prev, new)
        if fixed is not None:
            out.append(fixed)
    return tuple(out)


def _failing(verdict: str) -> bool:
    """A verdict whose signature is the failure's: a moved signature is news."""
    return verdict in REPRODUCES or verdict == "different-failure"


def recorded_side(prev: Prior | None, new: CapsuleResult) -> Transition | None:
    if prev is None:
        return Transition(new.capsule_id, new.path, "new", "new", new.verdict,
                          new.reason if new.verdict in ("broken", "infra-error") else "")
    if prev.verdict == new.verdict:
        if _failing(new.verdict) and prev.signature != new.signature:
            return Transition(new.capsule_id, new.path, "signature-changed", prev.verdict, new.verdict,
                              f"signature {prev.signature or 'none'} -> {new.signature or 'none'}")
        return None
    kind: TransitionKind
    if new.verdict == "broken":
        kind = "broken"
    elif new.verdict == "reproduced":
        kind = "newly-reproducing"
    elif new.verdict == "flaky":
        kind = "flaky"
    else:  # e.g. no longer reproducing at its own commit: the environment moved, not a fix
        kind = "other"
    detail = new.reason if new.verdict in ("broken", "infra-error") else ""
    return Transition(new.capsule_id, new.path, kind, prev.verdict, new.verdict, detail)


def ref_side(prev: Prior | None, new: CapsuleResult) -> Transition | None:
    if new.ref_verdict != "fixed" or (prev is not None and prev.ref_verdict == "fixed" and prev.ref == new.ref):
        return None
    before = prev.ref_verdict if prev is not None and prev.ref_verdict else ("new" if prev is None else "not-judged")
    return Transition(new.capsule_id, new.path, "fixed", before, "fixed", f"at {new.ref}")

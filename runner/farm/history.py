"""What changed between two nights: the "since last night" list (pure)."""
from __future__ import annotations

from typing import Literal

from .model import CapsuleResult, Night, Transition

_REPRODUCING = ("reproduced", "flaky", "different-failure")
TransitionKind = Literal["newly-reproducing", "fixed", "flaky", "signature-changed", "broken", "new", "other"]


def transitions(before: Night | None, after: Night) -> tuple[Transition, ...]:
    """One transition per capsule whose recorded-commit state changed, one more when its
    verdict at REF did; capsules gone since `before` are not listed (nothing to say now)."""
    old = {r.capsule_id: r for r in (before.results if before else ())}
    out: list[Transition] = []
    for new in after.results:
        prev = old.get(new.capsule_id)
        moved = _recorded_side(prev, new)
        if moved is not None:
            out.append(moved)
        fixed = _ref_side(prev, new)
        if fixed is not None:
            out.append(fixed)
    return tuple(out)


def _recorded_side(prev: CapsuleResult | None, new: CapsuleResult) -> Transition | None:
    if prev is None:
        return Transition(new.capsule_id, new.path, "new", None, new.verdict, "first night for this capsule")
    if prev.verdict == new.verdict:
        if new.verdict in _REPRODUCING and prev.signature != new.signature:
            return Transition(new.capsule_id, new.path, "signature-changed", prev.verdict, new.verdict,
                              f"{prev.signature} -> {new.signature}")
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
    detail = new.reason if new.verdict in ("broken", "infra-error") else f"{prev.verdict} -> {new.verdict}"
    return Transition(new.capsule_id, new.path, kind, prev.verdict, new.verdict, detail)


def _ref_side(prev: CapsuleResult | None, new: CapsuleResult) -> Transition | None:
    if new.ref_verdict != "fixed" or (prev is not None and prev.ref_verdict == "fixed" and prev.ref == new.ref):
        return None
    return Transition(new.capsule_id, new.path, "fixed", prev.ref_verdict if prev else None, "fixed",
                      f"passes at {new.ref}")

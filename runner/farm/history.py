"""What changed across nights: the "since last night" list (pure).

A transition says its before and after states once (`before` is "new" on a capsule's
first night); its detail adds only what the two states do not say (the reason a capsule
broke, how the signature moved, the REF).

Two rules keep a flaky failure from making news every morning:
- a capsule that reproduced counts as no longer reproducing only after `fixed_after` nights in
  a row without the failure (`farm report --fixed-after N`, default 3); until then it
  *stands* as reproducing (`standings`);
- a capsule's signatures are kept as a set (every signature its attempts showed, over its
  nights): another one of them is no "signature changed", only a signature never seen is.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from ..replay.defaults import DEFAULT_FIXED_AFTER
from ..verdict.facts import REPRODUCES, FarmVerdict, TransitionKind, Verdict
from .model import CapsuleResult, Night, Transition


class Prior(Protocol):
    """What a transition reads of an earlier night: a full result or the store's light mark."""

    @property
    def verdict(self) -> FarmVerdict: ...
    @property
    def signature(self) -> str | None: ...
    @property
    def ref(self) -> str | None: ...
    @property
    def ref_verdict(self) -> Verdict | None: ...
    @property
    def signatures(self) -> tuple[str, ...] | str | None: ...


def standings(verdicts: Sequence[FarmVerdict], fixed_after: int = DEFAULT_FIXED_AFTER) -> list[tuple[FarmVerdict, int]]:
    """Night by night, the state a capsule stands in and how many nights in a row it has gone
    without the failure while still standing as reproducing (0 when it is not held)."""
    out: list[tuple[FarmVerdict, int]] = []
    state: FarmVerdict | None = None
    held = 0
    for v in verdicts:
        if state in REPRODUCES and v == "not-reproduced" and held + 1 < fixed_after:
            held += 1
        else:
            state, held = v, 0
        assert state is not None
        out.append((state, held))
    return out


def signature_set(p: Prior) -> frozenset[str]:
    """A night's signatures: the stored set (a mark keeps it as JSON), else its one signature."""
    kept = p.signatures
    if isinstance(kept, str):
        kept = tuple(json.loads(kept))
    if kept:
        return frozenset(kept)
    return frozenset((p.signature,)) if p.signature else frozenset()


def transitions(nights: Sequence[Night], fixed_after: int = DEFAULT_FIXED_AFTER) -> tuple[Transition, ...]:
    """What the last of `nights` (oldest first) changed: one transition per capsule whose
    standing state at its recorded commit changed, one more when its verdict at REF did;
    capsules gone since are not listed (nothing to say now)."""
    if not nights:
        return ()
    earlier: dict[str, list[CapsuleResult]] = {}
    for night in nights[:-1]:
        for r in night.results:
            earlier.setdefault(r.capsule_id, []).append(r)
    out: list[Transition] = []
    for new in nights[-1].results:
        prior = earlier.get(new.capsule_id, [])
        for moved in (recorded_side(prior, new, fixed_after), ref_side(prior[-1] if prior else None, new)):
            if moved is not None:
                out.append(moved)
    return tuple(out)


def _failing(verdict: str) -> bool:
    """A verdict whose signature is the failure's: a signature never seen is news."""
    return verdict in REPRODUCES or verdict == "different-failure"


def recorded_side(prior: Sequence[Prior], new: CapsuleResult,
                  fixed_after: int = DEFAULT_FIXED_AFTER) -> Transition | None:
    """`prior`: the capsule's earlier nights, oldest first."""
    if not prior:
        return Transition(new.capsule_id, new.path, "new", "new", new.verdict,
                          new.reason if new.verdict in ("broken", "infra-error") else "")
    steps = standings([p.verdict for p in prior] + [new.verdict], fixed_after)
    was, now = steps[-2][0], steps[-1][0]
    if was == now:
        known = frozenset().union(*(signature_set(p) for p in prior))
        if now == new.verdict and _failing(now) and signature_set(new) - known:
            return Transition(new.capsule_id, new.path, "signature-changed", was, now,
                              f"signature {prior[-1].signature or 'none'} -> {new.signature or 'none'}")
        return None
    kind: TransitionKind
    detail = new.reason if now in ("broken", "infra-error") else ""
    if now == "broken":
        kind = "broken"
    elif now == "reproduced":
        kind = "newly-reproducing"
    elif now == "flaky":
        kind = "flaky"
    elif now == "not-reproduced" and was in REPRODUCES:
        kind, detail = "no-longer-reproducing", f"{fixed_after} night(s) in a row without the failure"
    else:  # e.g. a failure of another kind: the environment moved, not a fix
        kind = "other"
    return Transition(new.capsule_id, new.path, kind, was, now, detail)


def ref_side(prev: Prior | None, new: CapsuleResult) -> Transition | None:
    if new.ref_verdict != "fixed" or (prev is not None and prev.ref_verdict == "fixed" and prev.ref == new.ref):
        return None
    before = prev.ref_verdict if prev is not None and prev.ref_verdict else ("new" if prev is None else "not-judged")
    return Transition(new.capsule_id, new.path, "fixed", before, "fixed", f"at {new.ref}")

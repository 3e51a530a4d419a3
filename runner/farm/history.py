"""What changed across nights: the "since last night" list (pure).

A transition says its before and after states once (`before` is "new" on a capsule's
first night); its detail adds only what the two states do not say (the reason a capsule
broke, how the signature moved, the runs that moved it, the REF).

The farm judges a capsule on its runs, not on its nights: a night's few attempts say little
of a flaky failure, so the state a capsule *stands* in (`standings`) moves away from
reproducing only when the pooled runs say so at the confidence (verdict/rate.py, Wilson
intervals):
- a capsule that reproduced counts as no longer reproducing only when its nights in a row
  without the failure are at least `fixed_after` (`farm report --fixed-after N`, default 3)
  and their runs' rate lies below the rate of the window's pooled runs (its last `window`
  nights and these; rate.below, the one fix rule): a deterministic failure that is fixed is
  news after N nights, a flaky one's lucky passes are not;
- a flaky capsule counts as reproducing every run only after at least `fixed_after` nights
  that failed every run, whose rate lies above the window's beyond chance (their interval's
  bottom above its top): a flaky capsule whose night happened to fail 3 of 3 is no news;
- a capsule's signatures are kept as a set (every signature its attempts showed, over its
  nights): another one of them is no "signature changed", only a signature never seen is.
A failure as recorded where none was, and a pass of a capsule that failed every run, are
sure evidence: they move the standing at once. A night that failed every run stands as flaky
only for passes that fell while the capsule stood as reproducing: after a fix, it is a
regression at once (and its next fix is judged on the runs since); passing since first seen, it
is one once its runs lie above that stretch's (_failing_every_run).
"""
from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..replay.defaults import DEFAULT_FIXED_AFTER
from ..verdict.vocabulary import REPRODUCES, FarmVerdict, TransitionKind, Verdict
from ..verdict.rate import DEFAULT_CONFIDENCE, Rate, below
from .records import CapsuleResult, Night, Transition

DEFAULT_WINDOW = 14  # a capsule's last nights whose runs are pooled (farm report --window)


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
    @property
    def runs(self) -> tuple[int, int] | None: ...


# One night of a capsule as the standing reads it: its verdict, failures as recorded, runs
# (None, None: no run decided, or a result stored without its rate).
NightRuns = tuple[FarmVerdict, int | None, int | None]


@dataclass(frozen=True)
class Judging:
    """How a standing is judged: the least nights without the failure, the confidence, and how
    many of a capsule's nights of runs are pooled."""

    fixed_after: int = DEFAULT_FIXED_AFTER
    confidence: float = DEFAULT_CONFIDENCE
    window: int = DEFAULT_WINDOW


@dataclass(frozen=True)
class Standing:
    """The state a capsule stands in after a night. `held`: its last nights in a row at another
    verdict that have not moved it; `since`: their runs, `pooled`: the window's runs with them
    (both also on the night such runs moved it)."""

    state: FarmVerdict
    held: int = 0
    since: Rate | None = None
    pooled: Rate | None = None

    def said(self, verdict: str, judging: Judging) -> str:
        """Why a held capsule still stands where it does, in words ("" when not held)."""
        if not self.held or self.since is None or self.pooled is None:
            return ""
        how = "without the failure" if verdict == "not-reproduced" else "failing every run"
        why = (f"at least {judging.fixed_after} needed" if self.held < judging.fixed_after else
               f"not yet {'below' if verdict == 'not-reproduced' else 'above'} the window's "
               f"{_rate_said(self.pooled)} at the confidence")
        return f"{self.held} night(s) {how}: {_rate_said(self.since)} runs, {why}; still {self.state}"


def _rate_said(rate: Rate) -> str:
    return f"{rate.failed}/{rate.runs}"


def night_runs(p: Prior) -> NightRuns:
    runs = p.runs
    return (p.verdict, *runs) if runs is not None else (p.verdict, None, None)


def _runs(night: NightRuns) -> tuple[int, int]:
    """A night's runs; a verdict stored without them counts as one run of its kind."""
    verdict, k, n = night
    if k is not None and n is not None:
        return k, n
    return {"reproduced": (1, 1), "flaky": (1, 2), "not-reproduced": (0, 1)}.get(verdict, (0, 0))


def _pool(runs: Sequence[tuple[int, int]], confidence: float) -> Rate:
    return Rate.of(sum(k for k, _ in runs), sum(n for _, n in runs), confidence)


# A move within the failure that only the runs can show: away from reproducing, or from flaky
# to failing every run; either after at least `fixed_after` nights of it. Every other change is
# sure evidence and moves at once: a failure where none was, a pass of a capsule that failed
# every run. A night that failed every run stands as flaky while the window's runs (since runs
# last moved the standing) hold a pass of the failure (_failing_every_run).
_SHOWN_BY_RUNS = frozenset({("reproduced", "not-reproduced"), ("flaky", "not-reproduced"), ("flaky", "reproduced")})


def _held(judging: Judging) -> float:
    """The confidence a move tried every night is held at: spread over the window's nights."""
    return 1 - (1 - judging.confidence) / judging.window


def _shown(verdict: str, held: int, since: Rate, before: Rate, judging: Judging) -> bool:
    """These runs moved it: at least `fixed_after` nights of them, and their rate lies beyond the
    rate of the window's runs before them at the confidence (below it, or above it)."""
    if held < judging.fixed_after:
        return False
    strict = _held(judging)
    since, before = Rate.of(since.failed, since.runs, strict), Rate.of(before.failed, before.runs, strict)
    return below(since, before) if verdict == "not-reproduced" else since.low > before.high


# Why a capsule stands as not reproducing: "fixed", its runs moved it there from reproducing (the
# farm said no longer reproducing); "passing", it was first seen so, or a sure move put it there.
Away = Literal["fixed", "passing"]


def standings(nights: Sequence[NightRuns], judging: Judging = Judging()) -> list[Standing]:
    """Night by night (oldest first), the state a capsule stands in, judged on its pooled runs."""
    return list(_standings(tuple(nights), judging))


@functools.lru_cache(maxsize=8192)
def _standings(nights: tuple[NightRuns, ...], judging: Judging) -> tuple[Standing, ...]:
    """standings, once per distinct history: a farm's capsules mostly share theirs (every night 3 of 3), and a
    report judges each capsule twice (its row, its transition)."""
    out: list[Standing] = []
    state: FarmVerdict | None = None
    pooled: list[tuple[int, int]] = []  # the runs of its nights since runs last moved it, oldest first
    held, last = 0, None
    away: Away | None = None  # it stands (or, through nights of no failure's run, last stood) as not reproducing
    for night in nights:
        verdict = night[0]
        pooled.append(_runs(night))
        if state is not None and (state, verdict) in _SHOWN_BY_RUNS:
            held, last = (held + 1 if last == verdict else 1), verdict
            # the window's runs with these: comparing with them, not only with the runs before, is
            # what keeps a flaky capsule's lucky nights (tried again every night) from moving it
            since = _pool(pooled[-held:], judging.confidence)
            window = _pool(pooled[:-held][-judging.window:], judging.confidence)
            if not _shown(verdict, held, since, window, judging):
                out.append(Standing(state, held, since, window))
                continue
            out.append(Standing(verdict, 0, since, window))  # moved by these runs, which it rests on now
            pooled, away = pooled[-held:], "fixed" if verdict == "not-reproduced" else None
        else:
            last = verdict
            if verdict == "reproduced" and state is not None:
                verdict = _failing_every_run(pooled, away, judging)
            if verdict == "not-reproduced" and away is None or verdict == "reproduced" and away is not None:
                pooled = pooled[-1:]  # a sure move into passing, or back to failing every run: its runs start here
            if verdict == "not-reproduced":
                away = away or "passing"
            elif verdict in REPRODUCES:
                away = None
            out.append(Standing(verdict))
        state, held = verdict, 0
    return tuple(out)


def _failing_every_run(pooled: Sequence[tuple[int, int]], away: Away | None, judging: Judging) -> FarmVerdict:
    """A night that failed every run (the last of `pooled`), moved to at once: flaky while the
    window's runs hold a pass of the failure. Passes while it stood as not reproducing are not the
    failure's: after a fix, such a night is a regression (reproduced); where it was passing since
    first seen, it is one when its runs lie above the passing stretch's at the held confidence
    (after 0/3 once, 3/3 reads as one flaky rate; after 0/30, as a failure that came)."""
    if away == "fixed" or all(k == n for k, n in pooled[-judging.window:]):  # every run failed: no bound needed
        return "reproduced"
    if away is None:
        return "flaky"
    night, stretch = (_pool(p, _held(judging)) for p in (pooled[-1:], pooled[:-1][-judging.window:]))
    return "reproduced" if night.low > stretch.high else "flaky"


def signature_set(p: Prior) -> frozenset[str]:
    """A night's signatures: the stored set (a mark keeps it as JSON), else its one signature."""
    kept = p.signatures
    if isinstance(kept, str):
        kept = _stored(kept)
    if kept:
        return frozenset(kept)
    return frozenset((p.signature,)) if p.signature else frozenset()


def unseen(p: Prior, earlier: Sequence[Prior]) -> bool:
    """Whether a night's failure holds a signature none of the earlier nights had (news), looked for
    from the newest back: a steady capsule's last night had them all."""
    missing = set(signature_set(p))
    for before in reversed(earlier):
        if not missing:
            break
        missing -= signature_set(before)
    return bool(missing)


@functools.lru_cache(maxsize=4096)
def _stored(text: str) -> tuple[str, ...]:
    """A mark's signatures as stored (JSON): read once per distinct text (a farm's nights repeat them)."""
    return tuple(json.loads(text))


def transitions(nights: Sequence[Night], fixed_after: int = DEFAULT_FIXED_AFTER,
                window: int = DEFAULT_WINDOW) -> tuple[Transition, ...]:
    """What the last of `nights` (oldest first) changed: one transition per capsule whose
    standing state at its recorded commit changed, one more when its verdict at REF did;
    capsules gone since are not listed (nothing to say now). Rates are stated at the last
    night's confidence."""
    if not nights:
        return ()
    judging = Judging(fixed_after, confidence_of(nights[-1].options), window)
    earlier: dict[str, list[CapsuleResult]] = {}
    for night in nights[:-1]:
        for r in night.results:
            earlier.setdefault(r.capsule_id, []).append(r)
    out: list[Transition] = []
    for new in nights[-1].results:
        prior = earlier.get(new.capsule_id, [])
        for moved in (recorded_side(prior, new, judging), ref_side(prior[-1] if prior else None, new)):
            if moved is not None:
                out.append(moved)
    return tuple(out)


def confidence_of(options: Mapping[str, Any]) -> float:
    """The confidence a night's rates were stated at (its stored options)."""
    value = options.get("confidence")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else DEFAULT_CONFIDENCE


def _failing(verdict: str) -> bool:
    """A verdict whose signature is the failure's: a signature never seen is news."""
    return verdict in REPRODUCES or verdict == "different-failure"


def recorded_side(prior: Sequence[Prior], new: CapsuleResult, judging: Judging = Judging()) -> Transition | None:
    """`prior`: the capsule's earlier nights, oldest first."""
    if not prior:
        return Transition(new.capsule_id, new.path, "new", "new", new.verdict,
                          new.reason if new.verdict in ("broken", "infra-error") else "")
    steps = standings([night_runs(p) for p in prior] + [night_runs(new)], judging)
    was, now = steps[-2].state, steps[-1].state
    if was == now:
        if _failing(now) and _failing(new.verdict) and unseen(new, prior):
            return Transition(new.capsule_id, new.path, "signature-changed", was, now,
                              f"signature {prior[-1].signature or 'none'} -> {new.signature or 'none'}")
        return None
    kind: TransitionKind
    detail = new.reason if now in ("broken", "infra-error") else ""
    if now == "broken":
        kind = "broken"
    elif now == "reproduced":
        kind = "newly-reproducing"
        if was == "flaky":
            detail = _moved(steps, "failing every run", "above")
    elif now == "flaky":
        kind = "flaky"
    elif now == "not-reproduced" and was in REPRODUCES:
        kind, detail = "no-longer-reproducing", _moved(steps, "in a row without the failure", "below")
    else:  # e.g. a failure of another kind: the environment moved, not a fix
        kind = "other"
    return Transition(new.capsule_id, new.path, kind, was, now, detail)


def _moved(steps: Sequence[Standing], nights: str, how: str) -> str:
    """What the runs said when they moved the standing: `3 night(s) in a row without the
    failure: 0/9 runs, below the window's 42/51 (fails in 69–90 % of runs (95 %))`."""
    moved = steps[-1]
    if moved.since is None or moved.pooled is None:
        return ""
    return f"{steps[-2].held + 1} night(s) {nights}: {_rate_said(moved.since)} runs, {how} the window's " \
           f"{_rate_said(moved.pooled)} ({moved.pooled.phrase()})"


def ref_side(prev: Prior | None, new: CapsuleResult) -> Transition | None:
    if new.ref_verdict != "fixed" or (prev is not None and prev.ref_verdict == "fixed" and prev.ref == new.ref):
        return None
    before = prev.ref_verdict if prev is not None and prev.ref_verdict else ("new" if prev is None else "not-judged")
    return Transition(new.capsule_id, new.path, "fixed", before, "fixed", f"at {new.ref}")

"""Attention first: every capsule of the history as one row, in the order a team reads
them in the morning — new failures and changed verdicts, then newly flaky, then still
flaky, then never reproduced here, then steady — each with when it was first seen, its last
change (night, from → to), its reproduction rate over the last N nights with a Wilson
interval, and the one `replay` command that reproduces it on the farm's machine.

A capsule's group follows the state it stands in (history.standings), judged on its pooled
runs, not its nights: one that reproduced counts as no longer reproducing only after at least
--fixed-after nights in a row without the failure whose runs lie below its earlier rate at the
confidence, a flaky capsule's night that failed every run is no change until such nights fail
beyond chance more often than it did, and another of a flaky capsule's known signatures is no
change. A capsule judged on
every night it was seen and never reproduced has a group of its own, with what its plan did
not replay exactly (the likely reasons).

Built from the store's light marks (one small tuple per capsule per night) and the last
night's full results, so 10,000 capsules x 30 nights fit in memory and in seconds. Pure:
the text report, `--json` and the HTML all read the same rows.
"""
from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..replay.defaults import DEFAULT_FIXED_AFTER, DEFAULT_MEMORY, DEFAULT_TIMEOUT_S
from ..verdict.vocabulary import REPRODUCES, VERDICTS, attention_rank, is_trouble
from ..verdict.rate import DEFAULT_CONFIDENCE, Rate
from .history import DEFAULT_WINDOW, Judging, confidence_of, ref_side, recorded_side, standings, unseen
from .records import CapsuleResult, Mark, MarkRow, Night, Transition
from .store import HistoryStore

Group = Literal["changed", "newly-flaky", "still-flaky", "never-reproduced", "steady"]
GROUPS: tuple[Group, ...] = ("changed", "newly-flaky", "still-flaky", "never-reproduced", "steady")
GROUP_LABELS: Mapping[Group, str] = {"changed": "new failures and changed verdicts", "newly-flaky": "newly flaky",
                                     "still-flaky": "still flaky", "never-reproduced": "never reproduced here",
                                     "steady": "steady"}


@dataclass(frozen=True)
class Seen:
    night_id: str
    started_at: str


@dataclass(frozen=True)
class Change:
    """The last time the verdict moved: `before` is "new" on the capsule's first night."""

    night_id: str
    started_at: str
    before: str
    after: str


@dataclass(frozen=True)
class WindowRate:
    """Attempts that came back as recorded over the capsule's nights in the window."""

    rate: Rate
    nights: int  # nights of the window whose attempts count


@dataclass(frozen=True)
class Row:
    capsule_id: str
    path: str
    group: Group
    verdict: str  # its latest verdict among the nights shown
    standing: str  # the state it stands in (history.standings): `verdict`, or still reproducing while held
    held: int  # its last nights in a row at another verdict that have not moved its standing (history.Standing)
    signature: str | None
    ref_verdict: str | None
    in_last: bool  # judged in the last night
    first_seen: Seen
    last_change: Change
    rate: WindowRate | None
    strip: tuple[str | None, ...]  # its verdict on each night of the window, oldest first (None: absent)
    seen: tuple[tuple[int, MarkRow], ...]  # (night index, mark), oldest first
    has_commit: bool  # its latest capsule records a commit (the command passes --repo)
    result: CapsuleResult | None  # the full result of the last night, when it was in it
    options: Mapping[str, Any]  # the last night's, for the command
    fixed_after: int = DEFAULT_FIXED_AFTER
    held_said: str = ""  # why a held capsule still stands where it does (history.Standing.said)

    @property
    def not_applied(self) -> tuple[str, ...]:
        """What its last plan did not replay exactly (shown for a capsule never reproduced here)."""
        return self.result.not_applied if self.result is not None else ()

    @property
    def command(self) -> str:
        """`replay ...`, shell-quoted, that reproduces it on this machine (made when shown)."""
        return replay_command(self.path, self.has_commit, self.options)

    @property
    def news(self) -> bool:
        """Coloured: it changed, or it is in trouble whether or not it changed."""
        return self.group != "steady" or is_trouble(self.verdict)


@dataclass(frozen=True)
class Attention:
    nights: tuple[Night, ...]  # oldest first; results only on the last
    window: int
    rows: tuple[Row, ...]  # attention order
    transitions: tuple[Transition, ...]  # what the last night changed
    fixed_after: int = DEFAULT_FIXED_AFTER

    @property
    def last(self) -> Night | None:
        return self.nights[-1] if self.nights else None

    @property
    def window_nights(self) -> tuple[Night, ...]:
        return self.nights[-self.window:]

    def group(self, name: Group) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.group == name)


Paths = Callable[[int], Mapping[str, tuple[str, bool]]]  # night index -> capsule id -> (path, has a commit)


def attention(store: HistoryStore, since: int | None = None, window: int = DEFAULT_WINDOW,
              attempts: bool = True, fixed_after: int = DEFAULT_FIXED_AFTER) -> Attention:
    """Read the history (the last `since` nights, all by default) into attention order; the
    last night's attempts too unless `attempts` is false (the text report shows none)."""
    nights = store.nights(since)
    if not nights:
        return Attention((), window, (), (), fixed_after)
    last = store.night(nights[-1].id, attempts=attempts)
    marks = [store.marks(n.id) for n in nights[:-1]]
    return build((*nights[:-1], last), marks, lambda i: store.paths(nights[i].id), window, fixed_after)


def build(nights: Sequence[Night], earlier: Sequence[Sequence[MarkRow]], paths: Paths,
          window: int = DEFAULT_WINDOW, fixed_after: int = DEFAULT_FIXED_AFTER) -> Attention:
    """`nights` oldest first, the last one with its full results; `earlier[i]` the marks of
    nights[i]; `paths` where a capsule absent from the last night was collected (read only
    for the nights that were such a capsule's last)."""
    last = nights[-1]
    full = {r.capsule_id: r for r in last.results}
    by_night: list[dict[str, MarkRow]] = [{m[0]: m for m in marks} for marks in earlier]
    by_night.append({cid: mark_of(r) for cid, r in full.items()})
    ids: dict[str, None] = {}
    for marks_of in by_night:
        ids.update(dict.fromkeys(marks_of))
    start = max(0, len(nights) - window)
    read_paths = functools.cache(paths)
    judging = Judging(fixed_after, confidence_of(last.options), window)
    rows = []
    for cid in ids:
        seen = tuple((i, m) for i, marks_of in enumerate(by_night) if (m := marks_of.get(cid)) is not None)
        result = full.get(cid)
        if result is not None:
            where = (result.path, result.commit is not None)
        else:
            where = read_paths(seen[-1][0])[cid]
        rows.append(_row(nights, start, seen, where, result, last.options, judging))
    rows.sort(key=_sort_key)
    return Attention(tuple(nights), window, tuple(rows), _transitions(rows, len(nights) - 1, judging), fixed_after)


def mark_of(r: CapsuleResult) -> MarkRow:
    rate = r.rate
    return (r.capsule_id, r.verdict, r.signature, r.ref, r.ref_verdict, rate.failed if rate else None,
            rate.runs if rate else None, json.dumps(list(r.signatures)) if r.signatures else None)


def _row(nights: Sequence[Night], start: int, seen: tuple[tuple[int, MarkRow], ...], where: tuple[str, bool],
         result: CapsuleResult | None, options: Mapping[str, Any], judging: Judging) -> Row:
    steps = standings([(m[1], m[5], m[6]) for _, m in seen], judging)
    i_first = seen[0][0]
    change_at, before, after = i_first, "new", steps[0].state
    strip: list[str | None] = [None] * (len(nights) - start)
    k = n = judged = 0
    for j, (i, (_, verdict, _, _, _, rate_k, rate_n, _)) in enumerate(seen):
        if j and steps[j].state != steps[j - 1].state:
            change_at, before, after = i, steps[j - 1].state, steps[j].state
        if i >= start:
            strip[i - start] = verdict
            if rate_n:  # a night whose attempts decided something (broken and timed-out ones did not)
                judged += 1
                k += rate_k or 0
                n += rate_n
    latest = Mark._make(seen[-1][1])
    in_last = seen[-1][0] == len(nights) - 1
    at, changed = nights[i_first], nights[change_at]
    now = steps[-1]
    return Row(latest.capsule_id, where[0], _group(seen, [s.state for s in steps], in_last), latest.verdict, now.state,
               now.held, latest.signature, latest.ref_verdict, in_last, Seen(at.id, at.started_at),
               Change(changed.id, changed.started_at, before, after),
               WindowRate(Rate.of(k, n, judging.confidence), judged) if n else None, tuple(strip), seen, where[1],
               result, options, judging.fixed_after, now.said(latest.verdict, judging))


def _group(seen: Sequence[tuple[int, MarkRow]], steps: Sequence[str], in_last: bool) -> Group:
    if not in_last:
        return "steady"  # not collected last night: nothing new to say about it
    verdicts = [m[1] for _, m in seen]
    if verdicts[-1] in VERDICTS and not any(v in REPRODUCES for v in verdicts):
        return "never-reproduced"  # judged, and never reproduced since it was first seen
    now = steps[-1]
    was = steps[-2] if len(steps) > 1 else None
    if now == "flaky":
        return "still-flaky" if was == "flaky" else "newly-flaky"
    m = Mark._make(seen[-1][1])
    prev = Mark._make(seen[-2][1]) if len(seen) > 1 else None
    if prev is None or was != now or (m.ref_verdict == "fixed" and prev.ref_verdict != "fixed"):
        return "changed"
    if now == m.verdict and m.verdict in ("reproduced", "different-failure") and \
            unseen(m, [Mark._make(p) for _, p in seen[:-1]]):
        return "changed"  # the same verdict, a failure never seen before
    return "steady"


def _sort_key(r: Row) -> tuple[int, int, int, str, str]:
    return (GROUPS.index(r.group), 0 if r.in_last else 1, attention_rank(r.verdict), r.path, r.capsule_id)


def _transitions(rows: Sequence[Row], i_last: int, judging: Judging) -> tuple[Transition, ...]:
    out: list[Transition] = []
    for row in sorted((r for r in rows if r.result is not None), key=lambda r: (r.path, r.capsule_id)):
        assert row.result is not None
        prior = [Mark._make(m) for _, m in row.seen[:-1]] if row.seen[-1][0] == i_last else []
        for t in (recorded_side(prior, row.result, judging), ref_side(prior[-1] if prior else None, row.result)):
            if t is not None:
                out.append(t)
    return tuple(out)


def replay_command(path: str, has_commit: bool, options: Mapping[str, Any]) -> str:
    """The `replay` command line that reproduces a capsule here, with the night's options
    that change what replay does; every value shell-quoted (a path is a capsule's someone
    else collected: it may hold spaces, quotes or `$(...)`)."""
    shown = f"./{path}" if path.startswith("-") else path  # never read as an option
    args = ["replay", shown]
    repo = options.get("repo_url") or options.get("repo")  # --repo-url: a CI checkout's path means nothing elsewhere
    if has_commit and repo:
        args += ["--repo", str(repo)]
    for rule in options.get("mirrors") or ():
        args += ["--mirror", str(rule)]
    for key in options.get("trust_keys") or ():
        args += ["--trust-key", str(key)]
    if options.get("require_valid"):
        args.append("--require-valid")
    # not --attempts: the night's K is a least number of runs, replay's --attempts an exact one
    for flag, name, default in (("--timeout", "timeout", DEFAULT_TIMEOUT_S),
                                ("--memory", "memory", DEFAULT_MEMORY), ("--confidence", "confidence", DEFAULT_CONFIDENCE)):
        value = options.get(name)
        if value is not None and value != default:
            args += [flag, str(value)]
    line = shlex.join(args)
    for name in options.get("supplied") or ():  # a supplied value is never stored: the shell supplies it again
        if str(name).isidentifier() and str(name).isascii():
            line += f' --env "{name}=${name}"'
    return line


def counts(rows: Sequence[Row]) -> dict[str, int]:
    out: dict[str, int] = {g: 0 for g in GROUPS}
    for r in rows:
        out[r.group] += 1
    return out


__all__ = ["Attention", "Change", "DEFAULT_WINDOW", "GROUPS", "GROUP_LABELS", "Group", "Row",
           "Seen", "WindowRate", "attention", "build", "counts", "replay_command"]

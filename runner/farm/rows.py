"""The history's rows and the farm's model, each way: what the store writes for a night, a
capsule's result and an attempt, and what it reads back.

What it reads back is checked against the history's own invariants first (a rate's failures
within its runs, JSON lists where the store writes them, texts and numbers where it writes
those): a history edited by hand or written by another tool is refused naming the row
(BadRow, which the store turns into one line about the file, exit 2), never an internal error.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..textsafe import shown
from ..verdict.rate import CONFIDENCE_RANGE, DEFAULT_CONFIDENCE, Rate
from .records import AttemptRecord, CapsuleResult, MarkRow, Night


class BadRow(Exception):
    """A row that breaks the history's invariants: `where` names it, `problem` says how."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


def _where(table: str, row: Mapping[str, Any] | None = None, **keys: Any) -> str:
    named = {**{k: row.get(k) for k in ("night_id", "capsule_id", "id") if row is not None and k in row}, **keys}
    return f"{table} row (" + ", ".join(f"{k} {shown(str(v), 80)}" for k, v in named.items()) + ")"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_rate(k: Any, n: Any) -> str | None:
    """The rate's invariant: failures as recorded within the runs (both set, or neither)."""
    if k is None and n is None:
        return None
    if not (_is_int(k) and _is_int(n)):
        return f"rate_k {shown(repr(k), 40)} and rate_n {shown(repr(n), 40)}: two whole numbers, or neither set"
    if not 0 <= k <= n:
        return f"{k} failures out of {n} runs (a rate's failures lie within its runs)"
    return None


def _texts(v: Any, nullable: bool = False) -> tuple[str, ...] | None:
    """A JSON list of texts as the store writes one; None when it is not one."""
    if v is None and nullable:
        return ()
    try:
        got = json.loads(v) if isinstance(v, str) else None
    except ValueError:
        return None
    if got is None and nullable:
        return ()
    if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
        return None
    return tuple(got)


def texts_of(row: Mapping[str, Any], column: str) -> tuple[str, ...]:
    got = _texts(row[column])
    if got is None:
        raise BadRow(_where("night_capsules", row), f"{column} is not a JSON list of texts")
    return got


def options_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """A night's options as `farm run` stored them (a resume runs with them)."""
    try:
        options = json.loads(row["options"])
    except (TypeError, ValueError):
        options = None
    if not isinstance(options, dict):
        raise BadRow(_where("nights", id=row.get("id")), "options is not a JSON object")
    return options


_TEXT = ("night_id", "capsule_id", "path", "format", "verdict", "reason", "replay_version", "finished_at")
_TEXT_OR_NULL = ("repo", "commit_id", "signature", "recorded_signature", "ref", "ref_verdict", "image_digest")
_LISTS = ("key_lines", "also_at")
_LISTS_OR_NULL = ("signatures", "not_applied")


def check_result(row: Mapping[str, Any]) -> None:
    """A result row as the store writes one, else BadRow naming it."""
    problem = _check_rate(row["rate_k"], row["rate_n"])
    problem = problem or next((f"{c} is not a text" for c in _TEXT if not isinstance(row.get(c), str)), None)
    problem = problem or next((f"{c} is not a text" for c in _TEXT_OR_NULL if row.get(c) is not None
                               and not isinstance(row.get(c), str)), None)
    problem = problem or next((f"{c} is not a JSON list of texts" for c in _LISTS if _texts(row.get(c)) is None), None)
    problem = problem or next((f"{c} is not a JSON list of texts" for c in _LISTS_OR_NULL
                               if _texts(row.get(c), nullable=True) is None), None)
    if not problem and row["rate_n"] is not None:
        low, high, conf = row["rate_low"], row["rate_high"], row.get("rate_confidence")
        if not (_is_number(low) and _is_number(high) and 0 <= low <= high <= 1):
            problem = f"rate bounds {shown(repr(low), 40)}..{shown(repr(high), 40)} are not within 0..1"
        elif conf is not None and not (_is_number(conf) and CONFIDENCE_RANGE[0] <= conf <= CONFIDENCE_RANGE[1]):
            problem = f"rate confidence {shown(repr(conf), 40)} is not from {CONFIDENCE_RANGE[0]} to {CONFIDENCE_RANGE[1]}"
    if not problem and (row["exit_code"] is not None and not _is_int(row["exit_code"])
                        or not _is_number(row["duration_s"])):
        problem = "exit_code or duration_s is not a number"
    if problem:
        raise BadRow(_where("results", row), problem)


def check_marks(night_id: str, marks: Sequence[MarkRow]) -> None:
    """A night's marks (300,000 of them for a large report: only what the views read is checked,
    with plain type tests inline, each signature set's text parsed once)."""
    seen: set[str | None] = {None}
    for m in marks:
        k, n, sig, ref, ref_verdict, sigs = m[5], m[6], m[2], m[3], m[4], m[7]
        if (k is not None or n is not None) and (type(k) is not int or type(n) is not int or not 0 <= k <= n) \
                or type(m[0]) is not str or type(m[1]) is not str or sig is not None and type(sig) is not str \
                or ref is not None and type(ref) is not str or ref_verdict is not None and type(ref_verdict) is not str \
                or sigs not in seen and _texts(sigs, nullable=True) is None:
            raise BadRow(_where("results", night_id=night_id, capsule_id=m[0]), _mark_problem(m))
        seen.add(sigs)


def _mark_problem(m: MarkRow) -> str:
    if problem := _check_rate(m[5], m[6]):
        return problem
    if _texts(m[7], nullable=True) is None:
        return "signatures is not a JSON list of texts"
    return "capsule_id, verdict, signature, ref or ref_verdict is not a text"


def night_of(row: Mapping[str, Any], results: tuple[CapsuleResult, ...] = ()) -> Night:
    sources = _texts(row["sources"])
    if sources is None or not all(isinstance(row[c], str) for c in ("id", "started_at")) or \
            not all(row[c] is None or _is_int(row[c]) for c in ("images", "builds")):
        raise BadRow(_where("nights", id=row.get("id")), "sources is not a JSON list of texts, or id, started_at, "
                                                         "images or builds is not what the store writes")
    try:
        options = json.loads(row["options"] or "{}")
    except ValueError:
        options = {}
    return Night(id=row["id"], started_at=row["started_at"], finished_at=row["finished_at"], ref=row["ref"],
                 sources=sources, results=results, images=row["images"] or 0,
                 builds=row["builds"] or 0, options=options if isinstance(options, dict) else {})


def result_row(r: CapsuleResult) -> dict[str, Any]:
    rate = r.rate
    return {
        "night_id": r.night_id, "capsule_id": r.capsule_id, "path": r.path, "format": r.format, "repo": r.repo,
        "commit_id": r.commit, "verdict": r.verdict, "signature": r.signature,
        "recorded_signature": r.recorded_signature, "exit_code": r.exit_code, "key_lines": json.dumps(list(r.key_lines)),
        "reason": r.reason, "rate_k": rate.failed if rate else None, "rate_n": rate.runs if rate else None,
        "rate_low": rate.low if rate else None, "rate_high": rate.high if rate else None,
        "rate_confidence": rate.confidence if rate else None, "ref": r.ref,
        "ref_verdict": r.ref_verdict, "image_digest": r.image_digest, "duration_s": r.duration_s,
        "replay_version": r.replay_version, "finished_at": r.finished_at, "also_at": json.dumps(list(r.also_at)),
        "signatures": json.dumps(list(r.signatures)), "not_applied": json.dumps(list(r.not_applied)),
    }


def result_of(row: Mapping[str, Any], atts: Iterable[AttemptRecord]) -> CapsuleResult:
    check_result(row)
    rate = None if row["rate_n"] is None else Rate(row["rate_k"], row["rate_n"], row["rate_low"], row["rate_high"],
                                                   row.get("rate_confidence") or DEFAULT_CONFIDENCE)
    return CapsuleResult(
        night_id=row["night_id"], capsule_id=row["capsule_id"], path=row["path"], format=row["format"],
        repo=row["repo"], commit=row["commit_id"], verdict=row["verdict"], signature=row["signature"],
        recorded_signature=row["recorded_signature"], exit_code=row["exit_code"],
        key_lines=tuple(json.loads(row["key_lines"])), reason=row["reason"], rate=rate, ref=row["ref"],
        ref_verdict=row["ref_verdict"], image_digest=row["image_digest"], duration_s=row["duration_s"],
        replay_version=row["replay_version"], finished_at=row["finished_at"], attempts=tuple(atts),
        also_at=tuple(json.loads(row["also_at"])), signatures=signatures_of(row.get("signatures"), row["signature"]),
        not_applied=tuple(json.loads(row.get("not_applied") or "[]")),
    )


def signatures_of(stored: str | None, signature: str | None) -> tuple[str, ...]:
    """A result's signature set as stored (JSON); a result written before the store kept sets has
    its one most common signature."""
    if stored:
        return tuple(json.loads(stored))
    return (signature,) if signature else ()


def attempt_row(a: AttemptRecord) -> dict[str, Any]:
    return {"id": a.id, "night_id": a.night_id, "capsule_id": a.capsule_id, "side": a.side, "idx": a.index,
            "started_at": a.started_at, "finished_at": a.finished_at, "exit_code": a.exit_code, "signal": a.signal,
            "signature": a.signature, "classification": a.classification, "duration_s": a.duration_s,
            "timed_out": int(a.timed_out), "key_lines": json.dumps(list(a.key_lines))}


def attempt_of(row: Mapping[str, Any]) -> AttemptRecord:
    if _texts(row["key_lines"], nullable=True) is None or not _is_int(row["idx"]) or not all(
            row[c] is None or _is_int(row[c]) for c in ("exit_code", "timed_out")) or not all(
            isinstance(row[c], str) for c in ("id", "night_id", "capsule_id", "side", "state", "started_at")):
        raise BadRow(_where("attempts", row), "key_lines, idx, exit_code, timed_out or a text column is not what "
                                              "the store writes")
    return AttemptRecord(
        id=row["id"], night_id=row["night_id"], capsule_id=row["capsule_id"], side=row["side"], index=row["idx"],
        state=row["state"], started_at=row["started_at"], finished_at=row["finished_at"],
        exit_code=row["exit_code"], signal=row["signal"], signature=row["signature"],
        classification=row["classification"], duration_s=row["duration_s"], timed_out=bool(row["timed_out"]),
        key_lines=tuple(json.loads(row["key_lines"] or "[]")))

"""The history's rows and the farm's model, each way: what the store writes for a night, a
capsule's result and an attempt, and what it reads back."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..verdict.rate import DEFAULT_CONFIDENCE, Rate
from .model import AttemptRecord, CapsuleResult, Night


def night_of(row: Mapping[str, Any], results: tuple[CapsuleResult, ...] = ()) -> Night:
    try:
        options = json.loads(row["options"] or "{}")
    except ValueError:
        options = {}
    return Night(id=row["id"], started_at=row["started_at"], finished_at=row["finished_at"], ref=row["ref"],
                 sources=tuple(json.loads(row["sources"])), results=results, images=row["images"] or 0,
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
    return AttemptRecord(
        id=row["id"], night_id=row["night_id"], capsule_id=row["capsule_id"], side=row["side"], index=row["idx"],
        state=row["state"], started_at=row["started_at"], finished_at=row["finished_at"],
        exit_code=row["exit_code"], signal=row["signal"], signature=row["signature"],
        classification=row["classification"], duration_s=row["duration_s"], timed_out=bool(row["timed_out"]),
        key_lines=tuple(json.loads(row["key_lines"] or "[]")))

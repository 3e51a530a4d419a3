"""Farm model values for the unit tests, with only what a test cares about spelled out."""
from __future__ import annotations

import uuid
from typing import Any

from runner.farm.records import AttemptRecord, CapsuleResult, Night


def night(nid: str, started: str, finished: str | None = "x", **kw: Any) -> Night:
    return Night(id=nid, started_at=started, finished_at=started if finished == "x" else finished, **kw)


def result(night_id: str, cid: str, verdict: str = "reproduced", **kw: Any) -> CapsuleResult:
    base: dict[str, Any] = dict(path=f"caps/{cid}.json", format="twin", repo=None, commit=None,
                                replay_version="0.1.0", finished_at="2026-12-01T00:00:00Z")
    base.update(kw)
    return CapsuleResult(night_id=night_id, capsule_id=cid, verdict=verdict, **base)  # type: ignore[arg-type]


def attempt(night_id: str, cid: str, index: int, classification: str | None = None, side: str = "recorded",
            **kw: Any) -> AttemptRecord:
    state = "finished" if classification else "started"
    return AttemptRecord(id=uuid.uuid4().hex, night_id=night_id, capsule_id=cid, side=side,  # type: ignore[arg-type]
                         index=index, state=state, started_at="2026-12-01T00:00:00Z",  # type: ignore[arg-type]
                         finished_at="2026-12-01T00:00:01Z" if classification else None,
                         classification=classification, **kw)

"""The report as JSON and back: `from_json(to_json(r)) == r`, and the JSON of a report
read back is byte for byte the JSON it was read from (a farm stores reports)."""
from __future__ import annotations

from typing import Any

from ..codec import DecodeError, decode, encode
from ..outcome.runreport import ReplayReport

SCHEMA = "replay.report/1"


def to_json(report: ReplayReport) -> dict[str, Any]:
    data: dict[str, Any] = {"schema": SCHEMA}
    data.update(encode(report))
    data["summary"] = report.summary  # derived: from_json reads it past, to_json writes it again
    return data


def from_json(data: Any) -> ReplayReport:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise DecodeError("$.schema", f"not a {SCHEMA} report ({found!r})")
    return decode(ReplayReport, {k: v for k, v in data.items() if k != "schema"})

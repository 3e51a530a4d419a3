"""The plan as JSON: the codec a plan travels by (to a worker on another machine), and its digest.

A plan read back is checked like a fresh one (validate.py), since it may come from
another machine; the model (plan.py) stays a leaf.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from ..codec import DecodeError, decode, encode
from ..errors import CapsuleError
from .plan import Plan
from .validate import validate_plan

PLAN_SCHEMA = "replay.plan/1"


def plan_to_json(plan: Plan) -> dict[str, Any]:
    return {"schema": PLAN_SCHEMA, **encode(plan)}


def plan_from_json(data: Any, origin: str = "plan") -> Plan:
    """A plan read back, checked like a fresh one (it may come from another machine)."""
    if not isinstance(data, dict) or data.get("schema") != PLAN_SCHEMA:
        raise CapsuleError(origin, f"not a {PLAN_SCHEMA} document")
    try:
        plan = decode(Plan, {k: v for k, v in data.items() if k != "schema"})
    except (DecodeError, TypeError, ValueError) as exc:
        raise CapsuleError(origin, f"not a valid plan ({exc})") from exc
    return validate_plan(plan, origin)


def plan_digest(plan: Plan) -> str:
    """What the plan says, as a digest (of its JSON: no host path, no supplied value)."""
    return hashlib.sha256(json.dumps(plan_to_json(plan), sort_keys=True).encode()).hexdigest()

"""JSON Schemas (draft 2020-12) of every command's --json: the envelope and each result.

They ship in the package (runner/schemas/*.schema.json, written by runner/commands/outputs.py
from each command's result type, derive.py's rules) so a consumer can validate what replay prints:

    from runner.schemas import check
    check(json.loads(stdout))   # raises jsonschema.ValidationError naming the path
"""
from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """`envelope` or a command's result schema (`run`, `farm-report`...), as shipped."""
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@functools.cache
def validator(name: str) -> Draft202012Validator:
    doc = schema(name)
    Draft202012Validator.check_schema(doc)
    return Draft202012Validator(doc)


def result_schema_of(envelope_schema: str) -> str:
    """`replay.farm-run/1` -> `farm-run`."""
    return envelope_schema.removeprefix("replay.").split("/", 1)[0]


def check(envelope: Any) -> None:
    """Validate a --json document: the envelope, then its result against the command's schema."""
    validator("envelope").validate(envelope)
    if envelope.get("result") is not None:
        validator(result_schema_of(envelope["schema"])).validate(envelope["result"])

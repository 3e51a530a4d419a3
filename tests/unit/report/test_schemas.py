"""The shipped JSON Schemas: current with the result types, valid draft 2020-12, and strict
enough to refuse a result that is not what replay prints."""
from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator

from runner.codec import envelope, schema_of
from runner.report import to_json
from runner.commands.catalog import COMMANDS as DECLARED
from runner.commands.outputs import SCHEMAS as HERE
from runner.commands.outputs import documents as all_documents
from runner.commands.outputs import text
from runner.schemas import check, result_schema_of, schema
from tests.support.reports import report

COMMANDS = tuple(cmd.schema_name for cmd in DECLARED if cmd.result is not None)


def test_the_shipped_files_are_the_generated_ones() -> None:
    """After changing a result's shape: python -m runner.commands.outputs."""
    docs = all_documents()
    assert sorted(docs) == sorted(["envelope.schema.json", *(f"{c}.schema.json" for c in COMMANDS)])
    for name, doc in docs.items():
        assert (HERE / name).read_text("utf-8") == text(doc), f"{name} is stale: run python -m runner.commands.outputs"


@pytest.mark.parametrize("name", ["envelope", *COMMANDS])
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    doc = schema(name)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)


@pytest.mark.parametrize("command", ["run", "inspect", "diff", "verify", "signature", "bisect", "farm run",
                                     "farm report", "farm history"])
def test_every_commands_envelope_names_a_shipped_schema(command: str) -> None:
    assert result_schema_of(schema_of(command)) in COMMANDS


def run_envelope(result: Any) -> dict[str, Any]:
    return envelope("run", 0, result)


def test_a_report_validates_and_a_broken_one_does_not() -> None:
    good = to_json(report())
    check(run_envelope(good))
    for path, value in ((("verdict",), "maybe"), (("attempts", 0, "exit_code"), "1"),
                        (("expected", "failed"), "yes"), (("summary",), None)):
        bad = copy.deepcopy(good)
        target = bad
        for key in path[:-1]:
            target = target[key]
        if value is None:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            check(run_envelope(bad))


def test_the_envelope_is_checked_too() -> None:
    check(envelope("diff", 2, None, {"kind": "capsule", "message": "x.json: no such file", "file": "x.json"}))
    with pytest.raises(jsonschema.ValidationError):
        check(envelope("diff", 2, None, {"kind": "oops", "message": "m", "file": None}))
    with pytest.raises(jsonschema.ValidationError):
        check({**envelope("diff", 0, {}), "extra": 1})

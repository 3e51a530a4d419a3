"""Each tool's outputSchema is one self-contained object schema (the SDK's client resolves
`$ref`s inside it only) that holds the command's result envelope and its error envelope."""
from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry

from runner.cli.main import main
from runner.mcp.schemas import output_schema
from runner.mcp.tools import TOOLS

from tests.unit.mcp.session import TZ_CLOCK


def validator(command: str, schema_name: str) -> Draft202012Validator:
    schema = output_schema(command, schema_name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=Registry())  # as the SDK's client: nothing fetched


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    main([*args, "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_output_schema_is_an_object_schema_that_resolves_alone(tool: Any) -> None:
    schema = output_schema(tool.name, tool.schema_name)
    assert schema["type"] == "object"
    assert "$id" not in schema
    text = json.dumps(schema)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "')[1:]}:
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], ref
    error = {"schema": f"replay.{tool.schema_name}/1", "command": tool.name, "exit_code": 2, "result": None,
             "error": {"kind": "usage", "message": "x", "file": None}}
    validator(tool.name, tool.schema_name).validate(error)


def test_the_inspect_schema_holds_a_real_result_and_refuses_another_commands(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = cli_json(capsys, "inspect", str(TZ_CLOCK / "capsule.json"))
    check = validator("inspect", "inspect")
    check.validate(data)
    assert not check.is_valid({**data, "command": "diff", "schema": "replay.diff/1"})
    assert not check.is_valid({**data, "result": {"provenance": "not an object"}})


def test_the_diff_schema_holds_a_real_result(capsys: pytest.CaptureFixture[str]) -> None:
    capsule = str(TZ_CLOCK / "capsule.json")
    validator("diff", "diff").validate(cli_json(capsys, "diff", capsule, capsule))


def test_a_real_error_envelope_fits(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    data = cli_json(capsys, "inspect", str(bad))
    assert data["error"]["kind"] == "capsule"
    validator("inspect", "inspect").validate(data)


def test_render_has_the_shipped_result_schema() -> None:
    check = validator("render", "render")
    check.validate({"schema": "replay.render/1", "command": "render", "exit_code": 0,
                    "result": {"dockerfile": "FROM x\n", "builder": "classic", "notes": [], "context": None,
                               "build_line": None, "run_line": None}, "error": None})
    assert not check.is_valid({"schema": "replay.render/1", "command": "render", "exit_code": 0,
                               "result": {"notes": []}, "error": None})

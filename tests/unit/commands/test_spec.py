"""Declared parameters as MCP tool arguments: validated one by one with a message naming the
argument, turned into CLI words (`--name=value`, positionals after `--`), never a shell line."""
from __future__ import annotations

from typing import Any

import pytest

from runner.commands.spec import ArgumentError
from runner.mcp.tools import BY_NAME, TOOLS


def argv(tool: str, **arguments: Any) -> list[str]:
    return BY_NAME[tool].argv(arguments)


def test_the_tools_are_the_declared_ones() -> None:
    assert [t.mcp for t in TOOLS] == ["replay", "inspect", "diff", "verify", "signature", "render", "bisect",
                                      "pin", "doctor", "farm_report", "farm_history"]


def test_replay_takes_attempts_env_patch_ref_timeout() -> None:
    words = argv("replay", capsule="c.json", attempts=2, env=["TZ=UTC", "EMPTY="], patch="fix.diff",
                 ref="abc1234", timeout="15m", repo="../app.git")
    assert words == ["run", "--json", "--attempts=2", "--timeout=900s", "--env=TZ=UTC", "--env=EMPTY=",
                     "--repo=../app.git", "--ref=abc1234", "--patch=fix.diff", "--", "c.json"]


def test_a_value_that_looks_like_an_option_stays_a_value() -> None:
    assert argv("inspect", capsule="--help") == ["inspect", "--json", "--", "--help"]
    assert argv("replay", capsule="c", repo="--upload-pack=touch x")[2] == "--repo=--upload-pack=touch x"


def test_shell_text_is_passed_as_one_word() -> None:
    words = argv("diff", a="a.json; rm -rf /", b="$(reboot)")
    assert words[-2:] == ["a.json; rm -rf /", "$(reboot)"]


def test_a_bare_number_is_seconds_and_said_with_its_unit() -> None:
    assert argv("replay", capsule="c", timeout=15)[2] == "--timeout=15s"
    assert argv("bisect", bad="b", good="g", timeout=1.5)[2:4] == ["--good=g", "--timeout=1.5s"]


def test_flags_and_choices() -> None:
    assert argv("render", capsule="c", builder="buildkit", no_pin=True, all_runtimes=False) == [
        "render", "--json", "--no-pin", "--builder=buildkit", "--", "c"]
    assert argv("bisect", bad="b", good="g", commits=True)[:4] == ["bisect", "--json", "--good=g", "--commits"]


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("replay", {"capsule": "c", "attempts": 0}, "attempts: expected an integer from 1 to 50, got 0"),
    ("replay", {"capsule": "c", "attempts": "3"}, "attempts: expected an integer from 1 to 50, got '3'"),
    ("replay", {"capsule": "c", "attempts": True}, "attempts: expected an integer"),
    ("replay", {"capsule": "c", "env": "TZ=UTC"}, "env: expected a list of strings"),
    ("replay", {"capsule": "c", "env": ["TZ"]}, "env: 'TZ': expected NAME=VALUE"),
    ("replay", {"capsule": "c", "env": ["1X=a"]}, "env: '1X=a': expected NAME=VALUE"),
    ("replay", {"capsule": "c", "ref": "main"}, "ref: expected a commit id (7-64 hex digits), got 'main'"),
    ("replay", {"capsule": "c", "timeout": "soon"}, "timeout: expected seconds (a number) or a duration"),
    ("replay", {"capsule": "c", "timeout": 0}, "timeout: at least 1 second"),
    ("replay", {"capsule": 7}, "capsule: expected a non-empty string, got 7"),
    ("replay", {"capsule": "-"}, "capsule: '-' (standard input) is not available over MCP"),
    ("replay", {"capsule": "a\0b"}, "capsule: contains a NUL character"),
    ("replay", {}, "capsule: required"),
    ("replay", {"capsule": "c", "attempt": 2}, "unknown argument 'attempt'"),
    ("render", {"capsule": "c", "builder": "kaniko"}, "builder: one of classic, buildkit, got 'kaniko'"),
    ("bisect", {}, "bad: required"),
    ("verify", {"capsule": "c", "trust_key": ["k.pem", ""]}, "trust_key: expected a non-empty string"),
])
def test_a_bad_argument_is_named(tool: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError, match="^" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("$", r"\$")):
        BY_NAME[tool].argv(arguments)


def test_input_schemas_declare_every_argument() -> None:
    for tool in TOOLS:
        schema = tool.input_schema()
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["properties"]) == {p.name for p in tool.params if p.mcp and not p.hidden}
        assert all(p["description"] for p in schema["properties"].values())
    assert BY_NAME["replay"].input_schema()["required"] == ["capsule"]
    assert BY_NAME["diff"].input_schema()["required"] == ["a", "b"]


def test_an_env_item_is_bounded() -> None:
    """An env item of 128 KiB ended the call as a protocol error; now it is an argument error (issue 28)."""
    with pytest.raises(ArgumentError, match="^env: "):
        BY_NAME["replay"].argv({"capsule": "c", "env": ["X=" + "a" * 131072]})
    assert BY_NAME["replay"].input_schema()["properties"]["env"]["items"]["maxLength"] == 4096


# --- every string argument is bounded by its schema, whatever its kind ------------------------------


def _string_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema] if schema.get("type") == "string" else []
    for sub in (schema.get("items"), *schema.get("anyOf", ())):
        if isinstance(sub, dict):
            found += _string_schemas(sub)
    return found


def _too_long(p: Any) -> Any:
    """A value of the parameter's shape, one character over its schema's maxLength."""
    from runner.commands.spec import _max_length

    limit = _max_length(p.schema())
    assert limit is not None, p.name
    word = "A=" + "1" * (limit - 1) if p.kind == "env" else "1" * (limit + 1)  # digits: a count, a duration
    return [word] if p.repeatable else word


def test_every_string_in_every_tool_schema_has_a_max_length() -> None:
    for tool in TOOLS:
        for name, prop in tool.input_schema()["properties"].items():
            for string in _string_schemas(prop):
                assert "maxLength" in string, (tool.mcp, name)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.mcp)
def test_a_string_over_its_schema_is_refused_before_it_is_parsed(tool: Any) -> None:
    import jsonschema

    for p in tool.mcp_params():
        if p.kind in ("flag", "count", "number"):
            continue  # no string is ever one of these
        value = _too_long(p)
        assert not jsonschema.Draft202012Validator({"type": "object", "properties": {p.name: p.schema()}}).is_valid(
            {p.name: value}), (tool.mcp, p.name)
        with pytest.raises(ArgumentError, match=f"^{p.name}: "):
            p.check(value)


def test_a_duration_padded_past_its_schema_is_refused() -> None:
    """It once parsed: a megabyte of blanks around `15`."""
    with pytest.raises(ArgumentError, match="timeout: longer than 64 characters"):
        argv("replay", capsule="c", timeout=" " * 1_000_000 + "15")

"""The one console: --json output escapes what a terminal, an editor or a JavaScript parser would
act on (C1 controls, bidi overrides, U+2028/9); the MCP server's text answer follows the same rule."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runner.cli.main import main
from runner.commands.catalog import INSPECT
from runner.mcp.server import answer
from tests.examples import TZ_CAPSULE, json_variant

ARG = "a\x85b\x9b2J\u202etxt.js\u2066\u2028\u2029\x7f"
RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_inspect_json_escapes_c1_bidi_and_line_separators(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsule = json_variant(TZ_CAPSULE, tmp_path, lambda d: d["command"]["argv"].append(ARG))
    assert main(["inspect", str(capsule), "--json"]) == 0
    out = capsys.readouterr().out
    assert not RAW.search(out)
    assert "\\u0085b\\u009b2J\\u202e" in out
    assert ARG in json.dumps(json.loads(out), ensure_ascii=False)  # the same data, read back


def test_the_mcp_text_answer_escapes_them_too() -> None:
    """Both blocks: replay's own answer and the capsule text held apart in its marked block."""
    data = {"result": {"schema": "x", "command": {"argv": [ARG]}}, "error": None}
    blocks = answer(INSPECT, data).content
    texts = [b.text for b in blocks]  # type: ignore[union-attr]
    assert texts and not any(RAW.search(t) for t in texts)
    assert any("\\u0085b\\u009b2J\\u202e" in t for t in texts)

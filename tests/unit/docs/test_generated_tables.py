"""The settings table and the MCP tool table are made from the declarations: they name no file that
does not exist, every tool and argument the MCP server has, and every option's own variable (issue 40)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from runner import config
from runner.commands.catalog import COMMANDS
from runner.commands.common import GLOBALS

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
_FILE = re.compile(r"\b(?:runner|scripts|templates|tests|images)/[\w./-]*\w")
_LINK = re.compile(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)")


def _missing_files(text: str, base: Path) -> list[str]:
    named = set(_FILE.findall(text))
    assert all(not n.endswith("/") for n in named)
    return sorted({n for n in named if not (ROOT / n).exists()} | {m for m in _LINK.findall(text)
                                                                      if not (base / m).exists()})


def test_help_settings_names_no_file_that_does_not_exist_and_every_setting() -> None:
    out = subprocess.run([sys.executable, "-m", "runner", "help", "settings"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT).stdout
    page = (DOCS / "settings.md").read_text(encoding="utf-8")
    for text in (out, page):
        assert _missing_files(text, DOCS) == []
        assert all(s.variable in text for s in config.SETTINGS)
    assert "runner/cli/options.py" not in page


def test_every_option_with_a_variable_is_a_setting_and_every_option_setting_is_declared() -> None:
    declared = {(p.envvar, flag) for p in (*GLOBALS, *(p for c in COMMANDS for p in c.params)) if p.envvar
                for flag in p.flags}
    rows = {(s.variable, s.option) for s in config.SETTINGS if s.option}
    assert rows <= declared
    assert {v for v, _ in declared} == {v for v, _ in rows}  # each option's variable has its row (doctor lists it)
    assert all(not s.meaning for s in config.SETTINGS if s.option)  # its meaning is the option's, said once


def _tools() -> dict[str, set[str]]:
    from runner.mcp.server import tool_listing

    return {t.name: set(t.input_schema["properties"]) for t in tool_listing()}


def test_the_mcp_page_names_every_tool_and_argument_the_server_has_and_no_missing_file() -> None:
    page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert _missing_files(page, DOCS) == []
    table = page.split("<!-- mcp-tools:start -->")[1].split("<!-- mcp-tools:end -->")[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", table, re.MULTILINE)}
    tools = _tools()
    assert set(rows) == set(tools) and {"signature", "doctor"} <= set(tools)
    for name, arguments in tools.items():
        cell = re.sub(r"\([^)]*\)", "", rows[name].split("|")[3])  # without the hints: (`512m`, `4g`)
        listed = set(re.findall(r"`(\w+)`", cell))
        assert listed == arguments, name


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_no_generated_block_names_a_file_that_does_not_exist(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    for block in re.findall(r"<!-- [\w:-]+:start -->(.*?)<!-- [\w:-]+:end -->", text, re.DOTALL):
        assert _missing_files(block, DOCS) == [], page

"""The tools `replay mcp` offers: the commands whose declaration names an MCP tool
(runner/commands/catalog.py), each with the declaration's arguments, checks and result schema.

A tool runs `python -m runner WORDS... --json` and answers with that command's envelope; see
runner/mcp/child.py.
"""
from __future__ import annotations

from types import MappingProxyType

from ..commands.catalog import tools
from ..commands.spec import Command
from .untrusted import TOOL_NOTE

TOOLS: tuple[Command, ...] = tools()
BY_NAME = MappingProxyType({t.mcp: t for t in TOOLS if t.mcp})


def description(cmd: Command) -> str:
    """What an agent reads: the summary, what it should know besides, and the exit rule."""
    parts = [cmd.summary, cmd.mcp_help, f"exit_code: {cmd.exit_rule()}.", TOOL_NOTE]
    return " ".join(p for p in parts if p)

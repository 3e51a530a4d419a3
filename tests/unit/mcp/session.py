"""The real `replay mcp` server process, driven by the SDK's own client (stdio + ClientSession)."""
from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from runner.schemas import check

ROOT = Path(__file__).resolve().parents[3]
TZ_CLOCK = ROOT / "examples" / "tz-clock"


def server_command() -> tuple[str, list[str]]:
    """`replay mcp` through the venv's console script (what an agent's config runs), else -m runner."""
    script = Path(sys.executable).with_name("replay")
    return (str(script), ["mcp"]) if script.is_file() else (sys.executable, ["-m", "runner", "mcp"])


@asynccontextmanager
async def server_session(cwd: Path = ROOT) -> AsyncIterator[ClientSession]:
    command, args = server_command()
    # the client passes only a few safe variables by default: the tests' settings (REPLAY_*, DOCKER_HOST) too
    params = StdioServerParameters(command=command, args=args, cwd=cwd, env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()  # the client validates every result against these output schemas
        yield session


PLACEHOLDER = re.compile(r"<capsule text #([0-9]+)>")
HEAD = "untrusted: capsule text ("


def capsule_texts(result: types.CallToolResult) -> dict[str, dict[str, str]]:
    """The answer's second text block: its capsule text by number ({} when it has none)."""
    if len(result.content) < 2:
        return {}
    block = result.content[1]
    assert isinstance(block, types.TextContent) and block.text.startswith(HEAD), block
    held: dict[str, dict[str, str]] = json.loads(block.text.split(":\n", 1)[1])
    return held


def _restored(shown: Any, held: dict[str, dict[str, str]]) -> Any:
    """The envelope's text with each `<capsule text #N>` (a value or a member name) put back."""
    def back(text: str, member: str) -> str:
        m = PLACEHOLDER.fullmatch(text)
        return held[f"#{m.group(1)}"][member] if m else text

    if isinstance(shown, str):
        return back(shown, "text")
    if isinstance(shown, list):
        return [_restored(v, held) for v in shown]
    if isinstance(shown, dict):
        return {back(k, "key"): _restored(v, held) for k, v in shown.items()}
    return shown


def envelope_of(result: types.CallToolResult) -> dict[str, Any]:
    """The call's envelope (valid against the shipped schemas): the structured content without its
    `untrusted` member, the same as the text once its capsule text is put back from the second block."""
    structured = result.structured_content
    assert isinstance(structured, dict), result
    data = {k: v for k, v in structured.items() if k != "untrusted"}
    assert result.content and isinstance(result.content[0], types.TextContent)
    held = capsule_texts(result)
    assert _restored(json.loads(result.content[0].text), held) == data
    marks = structured["untrusted"]
    assert marks["paths"] + marks["keys"] == [t["at"] for t in held.values() if "text" in t] + [
        t["at"] for t in held.values() if "key" in t]
    assert result.is_error == (data["error"] is not None), data
    check(data)
    return data

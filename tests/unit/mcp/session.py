"""The real `replay mcp` server process, driven by the SDK's own client (stdio + ClientSession)."""
from __future__ import annotations

import json
import os
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


def envelope_of(result: types.CallToolResult) -> dict[str, Any]:
    """The call's envelope: structured content, the same JSON as text, valid against the shipped schemas."""
    data = result.structured_content
    assert isinstance(data, dict), result
    assert result.content and isinstance(result.content[0], types.TextContent)
    assert json.loads(result.content[0].text) == data
    assert result.is_error == (data["error"] is not None), data
    check(data)
    return data

"""`replay mcp`: serve replay's commands as MCP tools on stdin/stdout (for coding agents)."""
from __future__ import annotations

from ..commands.spec import Args


def mcp(a: Args) -> int:
    from ..mcp import serve

    serve()
    return 0

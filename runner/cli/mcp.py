"""`replay mcp`: serve replay's commands as MCP tools on stdin/stdout (for coding agents)."""
from __future__ import annotations

from ..commands.arguments import McpArgs


def mcp(a: McpArgs) -> int:
    from ..mcp import serve

    serve()
    return 0

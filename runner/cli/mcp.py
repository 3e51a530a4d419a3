"""`replay mcp`: serve replay's commands as MCP tools on stdin/stdout (for coding agents)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_command() -> None:
        """Serve inspect, diff, verify, replay, bisect, farm_report, farm_history and render as MCP tools
        over stdio; each answers with its command's --json envelope. Add `replay mcp` to an agent's MCP
        servers; it runs until the client closes stdin."""
        from ..mcp import serve

        serve()

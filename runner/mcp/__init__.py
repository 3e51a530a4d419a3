"""`replay mcp`: replay's commands as tools of a stdio MCP server (the `mcp` Python SDK).

tools.py lists the tools (the commands declared in runner/commands with an MCP name), schemas.py their output schemas,
child.py runs each call as the real CLI (`--json`) in a child process, server.py wires
them into the SDK's server.
"""
from .server import make_server, serve

__all__ = ["make_server", "serve"]

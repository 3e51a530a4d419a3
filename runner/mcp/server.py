"""`replay mcp`: replay's commands as MCP tools over stdio (the SDK's low-level server).

Each tool answers with its command's `--json` envelope as structured content, plus an
`untrusted` member naming the capsule text in it (untrusted.py); the text content is that
envelope with the capsule text replaced by `<capsule text #N>`, then a block headed
`untrusted: capsule text` holding it; a failed call (the envelope's error set) is a result with isError.
Bad arguments are refused before anything runs, as the CLI's usage errors (exit 2).
"""
from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..codec import envelope
from ..errors import Exit
from ..textsafe import json_text
from .child import enveloped, run_child
from ..commands.spec import ArgumentError, Command
from .schemas import output_schema, result_schema
from .tools import BY_NAME, TOOLS, description
from .untrusted import LABEL, RULE, TOOL_NOTE, mark

INSTRUCTIONS = ("replay rebuilds a recorded failure's environment (a capsule: twin, NovaFabric or CodeInstances) "
                "as a container image and reruns it. Start with inspect (what the capsule records), replay "
                "(does the recorded outcome come back: result.verdict), diff (what differs between two "
                "capsules), bisect (which facts make it fail). Every tool returns the envelope of "
                "`replay ... --json`: {schema, command, exit_code, result, error}. " + TOOL_NOTE)


def tool_listing() -> list[types.Tool]:
    return [types.Tool(name=str(t.mcp), title=f"replay {t.name}", description=description(t),
                       input_schema=t.input_schema(), output_schema=output_schema(t.name, t.schema_name),
                       annotations=types.ToolAnnotations(read_only_hint=t.read_only, open_world_hint=t.long,
                                                         destructive_hint=False))
            for t in TOOLS]


def answer(tool: Command, data: dict[str, Any]) -> types.CallToolResult:
    """The envelope as the tool's result, its capsule text held apart and marked: structured (the
    envelope and the pointers of its capsule text), and as text (replay's answer with the capsule
    text as `<capsule text #N>`, then that text in a block of its own)."""
    marked = mark(data, result_schema(tool.schema_name))
    own = json_text(marked.shown, indent=2)  # textsafe's JSON rule: C1, bidi, U+2028/9 escaped
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=own)]
    if marked.texts:
        held = f"{LABEL} ({RULE}):\n{json_text(marked.block(), indent=2)}"
        content.append(types.TextContent(type="text", text=held))
    structured = {**data, "untrusted": marked.member()}
    return types.CallToolResult(content=content, structured_content=structured, is_error=data.get("error") is not None)


async def call(tool: Command, arguments: dict[str, Any] | None, ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    """Run the tool's command; its envelope (a usage-error envelope for bad arguments)."""
    try:
        words = tool.argv(arguments)
    except ArgumentError as exc:
        error = {"kind": "usage", "message": f"{tool.mcp}: {exc}", "file": None}
        return envelope(tool.name, int(Exit.BAD_INPUT), None, error)
    count = 0

    async def progress(line: str) -> None:
        nonlocal count
        count += 1
        await ctx.session.report_progress(count, None, line)

    done = await run_child(words, progress if tool.long else None)
    return enveloped(tool.name, done)


async def _list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                      ) -> types.ListToolsResult:
    return types.ListToolsResult(tools=tool_listing())


async def _call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    tool = BY_NAME.get(params.name)
    if tool is None:
        raise MCPError(types.INVALID_PARAMS, f"no such tool {params.name!r} (tools: {', '.join(BY_NAME)})")
    return answer(tool, await call(tool, params.arguments, ctx))


def make_server() -> Server[Any]:
    return Server("replay", version=__version__, title="replay: hermetic replay of recorded runs",
                  instructions=INSTRUCTIONS, on_list_tools=_list_tools, on_call_tool=_call_tool)


async def _serve() -> None:
    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve() -> None:
    """Serve MCP on stdin/stdout until the client closes the connection."""
    anyio.run(_serve)

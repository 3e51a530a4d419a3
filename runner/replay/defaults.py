"""The run defaults, in one place: the CLI, bisect, the farm, the workers and the MCP
server read them here (a module of constants only: a command that shows a default loads
nothing else)."""
from __future__ import annotations

DEFAULT_ATTEMPTS = 3
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEMORY = "4g"
DEFAULT_PIDS = 4096

"""The run defaults, in one place: the CLI, bisect, the farm, the workers and the MCP
server read them here (a module of constants only: a command that shows a default loads
nothing else)."""
from __future__ import annotations

DEFAULT_ATTEMPTS = 3  # runs that all agree stop here (and --attempts N means exactly N)
DEFAULT_MAX_ATTEMPTS = 20  # the most runs of one series when they disagree (--max-attempts)
DEFAULT_FARM_MAX_ATTEMPTS = 10  # the farm's, per capsule and side of a night
DEFAULT_FIXED_AFTER = 3  # nights in a row without the failure before the farm counts it gone
DEFAULT_PRECISION = 0.25  # runs that disagree go on until the rate is known to within ±25 points
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEMORY = "4g"
DEFAULT_PIDS = 4096

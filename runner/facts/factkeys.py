"""The one vocabulary of fact keys: what `inspect`, `diff` and `bisect` call a fact.

A key names one thing about an environment: `env:TZ`, `runtime:node`, `tool:npm`,
`lock:npm`, `pin:node:lodash`, `source:diff`, `platform:base`... `diff` lists recorded
facts under these keys; `bisect` varies plan facts under the same keys (or lists them
as not varied, with the reason); `--sweep` takes them. Nothing else invents a key.
"""
from __future__ import annotations

import re

# Display groups, in the order reports list them.
GROUPS = (
    "command", "platform", "runtimes", "tools", "package managers", "resolved packages", "repo", "env",
    "locale", "http", "inputs",
)  # fmt: skip

_PREFIX_GROUP = {
    "command": "command", "platform": "platform", "runtime": "runtimes", "python": "runtimes",
    "tool": "tools", "lock": "package managers", "pin": "resolved packages", "source": "repo", "env": "env",
    "locale": "locale", "http": "http", "values": "http", "clock": "http", "network": "http", "input": "inputs",
}  # fmt: skip

SOURCE_DIFF = "source:diff"
SOURCE_COMMIT = "source:commit"
PLATFORM_BASE = "platform:base"  # the base image bisect varies (chosen from distro, version and libc)
HTTP_CALLS = "http:calls"


def group_of(key: str) -> str:
    return _PREFIX_GROUP[key.split(":", 1)[0]]


def env(name: str) -> str:
    return f"env:{name}"


def runtime(name: str) -> str:
    return f"runtime:{name}"


def tool(name: str) -> str:
    return f"tool:{name}"


def lock(manager: str) -> str:
    return f"lock:{manager}"


def pin(ecosystem: str, package: str) -> str:
    return f"pin:{ecosystem}:{normal_name(ecosystem, package)}"


def normal_name(ecosystem: str, package: str) -> str:
    """Python package names compare normalised (PEP 503); npm names as they are."""
    return re.sub(r"[-_.]+", "-", package).lower() if ecosystem == "python" else package

"""What tests that start a real service share: a free loopback port, and the one rule for a
missing service (a failure in CI, never a skip there; a skip on a developer's machine)."""
from __future__ import annotations

import os
import socket
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("REPLAY_REQUIRE_ENGINE") == "1" or bool(os.environ.get("CI"))


def missing(why: str) -> NoReturn:
    """A test's service is not here: fail in CI (scripts/setup installs it), skip elsewhere."""
    if in_ci():
        pytest.fail(why)
    pytest.skip(f"{why} (set REPLAY_REQUIRE_ENGINE=1 to fail instead)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

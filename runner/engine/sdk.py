"""The docker SDK's errors, made replay's: every call the engine makes goes through here.

A call rides out a daemon restart (tried again, with backoff, until the engine answers or
ENGINE_RETURN_S have gone); a full disk says so; whatever else the SDK or its HTTP client
raises out of an engine method becomes one typed error (exit 3) with one line, so no SDK
exception reaches the CLI's edge.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from tenacity import retry, retry_if_exception_type, stop_after_delay, wait_exponential

from ..errors import EngineUnavailable, ReplayError
from ..textsafe import cut
from .buildlog import DISK_FULL_HINT, disk_full

ENGINE_RETURN_S = 60.0  # how long a call waits for an engine that went away (a restart) to answer again


class TransientEngineError(ReplayError):
    """A failure worth retrying (daemon restarting, connection reset)."""


def _transient(exc: BaseException) -> bool:
    import docker.errors
    import requests

    if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError)):
        return True  # the second: a streamed answer (a wait, logs) cut off by the engine going away
    if isinstance(exc, docker.errors.APIError):
        return exc.status_code is not None and exc.status_code >= 500 and "No such" not in str(exc)
    return False


retrying = retry(
    retry=retry_if_exception_type(TransientEngineError),
    stop=stop_after_delay(ENGINE_RETURN_S),
    wait=wait_exponential(multiplier=0.25, max=2),
    reraise=True,
)


def sdk_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # the SDK raises many kinds; only some are worth a retry
        if disk_full(str(exc)):  # it stays full: no retry
            raise EngineUnavailable(DISK_FULL_HINT) from exc
        if _transient(exc):
            raise TransientEngineError(f"engine: {exc}") from exc
        raise


def subnet_taken(exc: BaseException) -> bool:
    """The engine's answer when another network holds the subnet asked for ("Pool overlaps with other
    one on this address space"): the one place that reads the engine's words for it."""
    return "overlap" in str(exc).lower()


def engine_error(exc: BaseException) -> ReplayError | None:
    """The typed error of an SDK or HTTP-client exception; None for anything else (a bug stays one)."""
    import docker.errors
    import requests

    if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError)):
        return EngineUnavailable(f"the engine connection dropped ({type(exc).__name__}); check the engine with "
                                 "`replay doctor`")
    if isinstance(exc, (docker.errors.DockerException, requests.exceptions.RequestException)):
        said = cut(" ".join(str(getattr(exc, "explanation", None) or exc).split()), 200)
        return EngineUnavailable(f"the engine failed: {said}; check it with `replay doctor`")
    return None


F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


def typed(fn: F) -> F:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ReplayError:
            raise
        except Exception as exc:
            typed_exc = engine_error(exc)
            if typed_exc is None:
                raise
            raise typed_exc from exc
    return call  # type: ignore[return-value]


def typed_errors(cls: C) -> C:
    """Every public method of an engine class raises replay's errors only."""
    for name, member in list(vars(cls).items()):
        if callable(member) and not name.startswith("_"):
            setattr(cls, name, typed(member))
    return cls

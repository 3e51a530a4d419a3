"""Hermetic network for a replay: the recorded HTTP/HTTPS calls, served by a sidecar.

`HttpReplaySession` (session.py) is the entry point; `HttpReport` (served.py) is
what it reports. The server itself lives in images/httpreplay (stdlib only). Names load
when first used: a report's reader needs no engine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..resources import exports

_WHERE = {**{n: ".served" for n in ("Difference", "HttpReport", "ServedCall", "UnmatchedRequest", "UnrecordedHost",
                                     "UnusedCall")},
          **{n: ".session" for n in ("ContainerSettings", "HttpReplayError", "HttpReplaySession")}}
__all__ = [
    "ContainerSettings", "Difference", "HttpReplayError", "HttpReplaySession", "HttpReport",
    "ServedCall", "UnmatchedRequest", "UnrecordedHost", "UnusedCall",
]

if TYPE_CHECKING:
    from .served import Difference, HttpReport, ServedCall, UnmatchedRequest, UnrecordedHost, UnusedCall
    from .session import ContainerSettings, HttpReplayError, HttpReplaySession

__getattr__ = exports(__name__, _WHERE)

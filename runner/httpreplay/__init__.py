"""Hermetic network for a replay: the recorded HTTP/HTTPS calls, served by a sidecar.

`HttpReplaySession` (session.py) is the entry point; `HttpReport` (report.py) is
what it reports. The server itself lives in images/httpreplay (stdlib only).
"""
from __future__ import annotations

from .report import Difference, HttpReport, ServedCall, UnmatchedRequest, UnrecordedHost, UnusedCall
from .session import ContainerSettings, HttpReplayError, HttpReplaySession

__all__ = [
    "ContainerSettings", "Difference", "HttpReplayError", "HttpReplaySession", "HttpReport",
    "ServedCall", "UnmatchedRequest", "UnrecordedHost", "UnusedCall",
]

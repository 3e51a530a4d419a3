"""Registry look-ups on the host against a real loopback server that never finishes its answer:
a byte at a time, each well within the per-read timeout, so only the whole answer's limit stops it."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from runner.errors import SourceUnavailable
from runner.build.sources.providers import registry_http
from tests.services import dribble, http_server


@pytest.fixture
def dribbling() -> Iterator[str]:
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            dribble(self, stop, 0.05)

        def log_message(self, *args: Any) -> None:
            pass

    with http_server(Handler) as url:
        try:
            yield url
        finally:
            stop.set()


def test_an_answer_that_never_ends_is_given_up_and_remembered(dribbling: str) -> None:
    registry_http._STALLED.clear()
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match="did not end within 5 s") as caught:
        registry_http.get(dribbling + "/left-pad", timeout=0.5)  # the whole answer: 10 x 0.5 s
    assert 4.5 < time.monotonic() - started < 60
    assert dribbling in caught.value.message
    with pytest.raises(SourceUnavailable, match="stalled earlier"):  # asked again: at once
        registry_http.get(dribbling + "/is-number", timeout=0.5)
    registry_http._STALLED.clear()


def test_an_answer_cut_off_before_its_length_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    class Short(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b'{"versions": {')  # then the connection closes

        def log_message(self, *args: Any) -> None:
            pass

    monkeypatch.setattr(registry_http._get.retry, "wait", lambda rs: 0)  # type: ignore[attr-defined]
    with http_server(Short) as url:
        with pytest.raises(SourceUnavailable, match=r"cut off \(14 of 100 bytes\)"):
            registry_http.get(url + "/left-pad", timeout=5)

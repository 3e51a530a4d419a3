"""Capsule URLs: redirects checked, a total time limit, credentials refused, tokens masked.

A real http.server on loopback in a thread serves every case."""
from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from runner.cli.main import main
from tests.examples import TZ_CAPSULE
from tests.services import dribble, http_server


class _Site(BaseHTTPRequestHandler):
    """/to redirects to `target`; /slow dribbles; anything else is the example capsule."""

    stop = threading.Event()
    target = ""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/to"):
            self.send_response(302)
            self.send_header("Location", self.target)
            self.end_headers()
        elif self.path.startswith("/slow"):
            dribble(self, self.stop, 0.2)
        elif self.path.startswith("/headers"):
            self._dribble_headers()
        else:
            body = TZ_CAPSULE.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def _dribble_headers(self) -> None:
        """A 200 whose headers never end: one header line every 0.2 s (each well within any read timeout)."""
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        n = 0
        try:
            while not self.stop.wait(0.2):
                n += 1
                self.wfile.write(f"X-Slow: {n}\r\n".encode())
                self.wfile.flush()
        except OSError:  # the client is gone
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    _Site.stop.clear()
    with http_server(_Site) as base:
        yield base
    _Site.stop.set()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port that listens and never answers: did anyone connect to it?"""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        s.setblocking(False)
        yield s


def _connected(s: socket.socket) -> bool:
    try:
        conn, _ = s.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_a_redirect_to_ftp_is_refused_without_logging_in(site: str, listener: socket.socket,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    port = listener.getsockname()[1]
    _Site.target = f"ftp://anonymous:guest@127.0.0.1:{port}/c.json"
    assert main(["inspect", f"{site}/to"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "redirected to ftp://" in err[0] and "http:// and https://" in err[0]
    assert "guest" not in err[0]
    assert not _connected(listener)  # no login, not even a connection, to the host the redirect names


def test_a_redirect_carrying_credentials_is_refused_unshown(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    host = site.removeprefix("http://")
    _Site.target = f"http://me:hunter2@{host}/c.json"
    assert main(["inspect", f"{site}/to"]) == 2
    err = capsys.readouterr().err
    assert "credentials" in err and "hunter2" not in err


def test_a_redirect_within_http_is_followed(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    _Site.target = f"{site}/c.json"
    assert main(["inspect", f"{site}/to"]) == 0


def test_a_trickling_body_is_cut_at_the_total(site: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPLAY_CAPSULE_TIMEOUT", "1.5")
    started = time.monotonic()
    assert main(["inspect", f"{site}/slow.json"]) == 3  # each read gets a byte well within any read timeout
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert "REPLAY_CAPSULE_TIMEOUT" in err and "1.5 s" in err
    assert took < 10  # the total, not 60 s a read


def test_headers_sent_one_line_at_a_time_are_cut_at_the_total(site: str, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPLAY_CAPSULE_TIMEOUT", "1.5")
    started = time.monotonic()
    assert main(["inspect", f"{site}/headers.json"]) == 3  # each header line comes within any read timeout
    took = time.monotonic() - started
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "REPLAY_CAPSULE_TIMEOUT" in err[0] and "1.5 s" in err[0], err
    assert took < 10  # the total, not 60 s a line


def test_a_bad_capsule_timeout_is_bad_input(site: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPLAY_CAPSULE_TIMEOUT", "soon")
    assert main(["inspect", f"{site}/c.json"]) == 2
    assert "REPLAY_CAPSULE_TIMEOUT" in capsys.readouterr().err


def test_credentials_in_the_url_are_refused_and_never_printed(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    url = site.replace("http://", "http://user:s3cretpw@") + "/c.json"
    assert main(["inspect", url]) == 2
    err = capsys.readouterr().err
    assert "credentials" in err and "s3cretpw" not in err
    assert main(["inspect", url, "--json"]) == 2
    captured = capsys.readouterr()
    assert "s3cretpw" not in captured.out + captured.err


def test_a_query_token_is_masked_in_inspect_json(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", f"{site}/c.json?token=glpat-abcdef123456", "--json"]) == 0
    out = capsys.readouterr().out
    assert "glpat-abcdef123456" not in out
    assert json.loads(out)["result"]["provenance"]["path"] == f"{site}/c.json?token=***"


def test_a_query_token_is_masked_in_error_lines(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    _Site.stop.set()  # /slow ends at once: an empty body, not a capsule
    assert main(["inspect", f"{site}/slow.json?access_token=abcdef123456"]) == 2
    err = capsys.readouterr().err
    assert "abcdef123456" not in err and "access_token=***" in err


def test_a_redirect_from_https_to_http_is_refused() -> None:
    """No TLS server here: the redirect rule itself, as urllib calls it for a 302."""
    import urllib.request
    from http.client import HTTPMessage

    from runner.capsules.download import _Deadline, _Redirects
    from runner.errors import CapsuleError

    handler = _Redirects("https://a.example/c.json", _Deadline("https://a.example/c.json", 60))
    request = urllib.request.Request("https://a.example/c.json")
    with pytest.raises(CapsuleError, match="step down to plain http"):
        handler.redirect_request(request, io.BytesIO(), 302, "Found", HTTPMessage(), "http://a.example/c.json")
    assert handler.redirect_request(request, io.BytesIO(), 302, "Found", HTTPMessage(), "https://b.example/c.json")

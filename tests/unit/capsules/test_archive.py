"""Packed capsule directories from URLs: unpacked under caps counted while unpacking, and a
refused archive leaves nothing in the cache. The caps are lowered for the test (the real ones,
256 MiB and 10,000 entries, would take a bomb of that size to reach)."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from runner.capsules import limits
from runner.cli.main import main
from tests.examples import NOVA




def _packed(path: Path, extra: dict[str, bytes]) -> None:
    """The example NovaFabric capsule as a .tar.gz, with `extra` files beside it."""
    with tarfile.open(path, "w:gz") as tar:
        tar.add(NOVA, arcname=NOVA.name)
        for name, data in extra.items():
            info = tarfile.TarInfo(f"{NOVA.name}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _cached(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_a_zip_bomb_is_refused_and_leaves_nothing(served: tuple[str, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    monkeypatch.setattr(limits, "UNPACKED_BYTES", 1024 * 1024)
    _packed(root / "bomb.tar.gz", {"zeros.bin": bytes(2 * 1024 * 1024)})  # 2 MiB of zeros: a few KB packed
    assert (root / "bomb.tar.gz").stat().st_size < 64 * 1024
    assert main(["verify", f"{base}/bomb.tar.gz"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bytes unpacked" in err[0] and f"{base}/bomb.tar.gz" in err[0]
    assert _cached(tmp_path) == []


def test_too_many_entries_are_refused_and_leave_nothing(served: tuple[str, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    monkeypatch.setattr(limits, "UNPACKED_ENTRIES", 100)
    _packed(root / "many.tar.gz", {f"empty/{i}": b"" for i in range(200)})
    assert main(["verify", f"{base}/many.tar.gz"]) == 2
    assert "more than 100 entries" in capsys.readouterr().err
    assert _cached(tmp_path) == []


def test_an_archive_within_the_caps_is_read(served: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    _packed(root / "ok.tar.gz", {"notes/extra.txt": b"hello"})
    assert main(["verify", f"{base}/ok.tar.gz"]) == 0


def test_an_archive_without_a_capsule_leaves_nothing(served: tuple[str, Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    with tarfile.open(root / "none.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("readme.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    assert main(["verify", f"{base}/none.tar.gz"]) == 2
    assert "without a capsule.yaml" in capsys.readouterr().err
    assert _cached(tmp_path) == []


def test_a_device_in_an_archive_is_refused(served: tuple[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    with tarfile.open(root / "fifo.tar", "w") as tar:
        tar.add(NOVA, arcname=NOVA.name)
        info = tarfile.TarInfo(f"{NOVA.name}/pipe")
        info.type = tarfile.FIFOTYPE
        tar.addfile(info)
    assert main(["verify", f"{base}/fifo.tar"]) == 2
    assert _cached(tmp_path) == []


def test_an_archive_whose_capsule_is_refused_leaves_nothing(served: tuple[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    with tarfile.open(root / "bad.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("run/capsule.yaml")
        data = b"{not: [yaml"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert main(["inspect", f"{base}/bad.tar.gz"]) == 2
    assert f"{base}/bad.tar.gz" in capsys.readouterr().err
    assert _cached(tmp_path) == []


def test_a_good_capsule_stays_in_the_cache(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    _packed(root / "ok.tar.gz", {})
    assert main(["inspect", f"{base}/ok.tar.gz"]) == 0
    assert _cached(tmp_path)

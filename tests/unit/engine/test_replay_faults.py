"""`replay CAPSULE` on the fake engine when a fault hits it: a full disk during the build, a remote
that cannot be cloned. One line, exit 3, and nothing left: no build context, no labelled leftovers."""
from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from runner.engine import BuildEvent
from runner.engine.buildlog import build_failure
from runner.errors import BuildFailed, Exit
from runner.build.plan import PlanOptions
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.build.sources.repo import RemoteFailed

from tests.examples import BUNDLE, TZ_CAPSULE, json_variant
from tests.unit.fake_engine import FakeEngine

pytestmark = pytest.mark.usefixtures("offline_registry")


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where replay's temporary directories (the build context among them) go, to see them gone."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def _disk_full(ctx: Path, tag: str, labels: Mapping[str, str]) -> Iterator[BuildEvent]:
    yield BuildEvent("log", "Step 1/9 : FROM replay-base/debian:bookworm")
    raise build_failure("write /var/lib/docker/overlay2/l/diff/x: no space left on device", [])


def test_a_full_disk_during_the_build_leaves_no_context(scratch: Path) -> None:
    engine = FakeEngine(build=_disk_full, images=["replay-base/debian:bookworm"])
    with pytest.raises(BuildFailed) as info:
        replay_capsule(TZ_CAPSULE, ReplayOptions(attempts=1, plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                       engine=engine)
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert "disk is full" in info.value.line() and "replay gc" in info.value.line()
    assert list(scratch.iterdir()) == []  # no half-written build context
    assert engine.cleaned  # and whatever carried this replay's label was removed


def test_a_remote_that_cannot_be_cloned_names_the_capsule(scratch: Path, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def change(d: dict[str, object]) -> None:
        d["repo"]["remote"] = f"https://ci:t0ken@127.0.0.1:{port}/team/app.git"  # type: ignore[index]

    capsule = json_variant(TZ_CAPSULE, tmp_path, change)
    engine = FakeEngine(images=["replay-base/debian:bookworm"])
    with pytest.raises(RemoteFailed) as info:
        replay_capsule(capsule, ReplayOptions(attempts=1), Progress(), engine=engine)
    line = info.value.line()
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert line.startswith(f"{capsule}: the capsule's remote \"https://127.0.0.1:{port}/team/app.git\" cannot be cloned")
    assert "t0ken" not in line and engine.builds == []
    assert list(scratch.iterdir()) == []

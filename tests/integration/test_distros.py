"""The recorded distro's official image, pulled from a registry (issue 12).

No public registry is reachable here, so the test starts Debian's docker-registry on a
loopback port (its config in tmp) and pushes an image made here under an official name:
replay-base/debian:bookworm as 127.0.0.1:PORT/library/ubuntu:22.04 (an apt family image).
A twin capsule recorded on "ubuntu 22.04" then plans the ubuntu:22.04 base, pulls it
from that registry and reproduces through it. The other families (dnf, pacman, apk) are
golden-file tests (tests/unit/test_baseimage.py): their images cannot be made here.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.build.sources.baseimage import DEFAULT, base_ref, ensure_base
from runner.capsules import read_capsule
from runner.config import Settings
from runner.build.planner import make_plan
from runner.build.sources.providers import distros

from tests.integration.helpers import TZ_CLOCK, replay, write_json
from tests.services import free_port, missing

pytestmark = pytest.mark.integration
CONFIG = """version: 0.1
storage:
  filesystem:
    rootdirectory: {root}
http:
  addr: 127.0.0.1:{port}
log:
  level: warn
"""



def _wait_answering(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Until the registry's API answers (the event), or it exits, or a generous deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"docker-registry exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"docker-registry did not answer {url} in {timeout:.0f} s")


@pytest.fixture(scope="module")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tool = shutil.which("docker-registry")
    if tool is None:
        missing("needs Debian's docker-registry (apt-get install -y docker-registry)")
    tmp = tmp_path_factory.mktemp("registry")
    port = free_port()
    (tmp / "config.yml").write_text(CONFIG.format(root=tmp / "data", port=port))
    proc = subprocess.Popen([tool, "serve", str(tmp / "config.yml")], stdout=subprocess.DEVNULL,
                            stderr=open(tmp / "log", "wb"))
    try:
        _wait_answering(f"http://127.0.0.1:{port}/v2/", proc)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def served_ubuntu(engine: Any, local_registry: str) -> Iterator[str]:
    """replay-base/debian:bookworm pushed as the registry's library/ubuntu:22.04, the local
    name untagged again so that the replay has to pull it."""
    settings = Settings(base_repo="replay-base/debian")
    source = ensure_base(engine, settings, DEFAULT)
    repo = f"{local_registry}/library/ubuntu"
    engine.tag(source, f"{repo}:22.04")
    for line in engine.client.images.push(repo, tag="22.04", stream=True, decode=True):
        assert "error" not in line, line
    engine.client.images.remove(f"{repo}:22.04")
    yield source


@pytest.fixture
def own_namespace(engine: Any, monkeypatch: pytest.MonkeyPatch, local_registry: str) -> Iterator[Settings]:
    """This test's own base namespace, so the pulled base is new, and removed after."""
    space = f"replay-distro-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("REPLAY_BASE_REPO", f"{space}/debian")
    monkeypatch.setenv("REPLAY_REGISTRY", local_registry)
    monkeypatch.setenv("COLUMNS", "300")
    distros.available.cache_clear()
    yield Settings()
    distros.available.cache_clear()
    for ref in (f"{space}/ubuntu:22.04", f"{local_registry}/library/ubuntu:22.04"):
        if engine.image_exists(ref):
            engine.client.images.remove(ref)


def recorded_on(tmp_path: Path, distro: str, version: str, libc: str, libc_version: str) -> Path:
    data = json.loads((TZ_CLOCK / "capsule.json").read_text())
    data["os"].update(distro=distro, distroVersion=version, libc=libc, libcVersion=libc_version)
    return write_json(tmp_path / "capsule.json", data)


def test_a_capsule_recorded_on_ubuntu_replays_on_the_pulled_ubuntu_image(
        engine: Any, served_ubuntu: str, own_namespace: Settings, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    capsule = recorded_on(tmp_path, "ubuntu", "22.04", "glibc", "2.35")
    pulled = f"{own_namespace.base_repo.split('/')[0]}/ubuntu:22.04"
    assert not engine.image_exists(pulled)
    rc, report = replay(capsys, capsule, "--repo", TZ_CLOCK / "repo.bundle", "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced")
    row = next(f for f in report["fidelity"] if f["fact"] == "platform distro")
    assert (row["recorded"], row["status"]) == ("ubuntu 22.04", "exact") and "ubuntu:22.04" in row["replayed"]
    assert engine.image_id(pulled) == engine.image_id(served_ubuntu)  # the very image the registry served


def test_an_image_the_registry_does_not_serve_falls_back_to_debian(
        engine: Any, served_ubuntu: str, own_namespace: Settings, local_registry: str, tmp_path: Path) -> None:
    plan = make_plan(read_capsule(recorded_on(tmp_path, "fedora", "40", "glibc", "2.39")), own_namespace)
    assert (plan.base.distro, plan.base.image, plan.base.suite) == ("debian", "", "trixie")  # nearest glibc to 2.39
    row = next(f for f in plan.fidelity if f.fact == "platform distro")
    assert row.status == "approximated" and f"fedora:40 is not served by {local_registry} (HTTP 404)" in row.why
    assert base_ref(own_namespace, plan.base).endswith("/debian:trixie")

"""Base images: the recorded distro's official image when a registry serves it, the nearest
Debian suite (reported) when not; the system layer written for each package manager.

The registry here is a real HTTP server on a loopback port that speaks the part of the
registry API the probe uses (HEAD /v2/library/NAME/manifests/TAG, optionally behind a
Docker Hub style Bearer token); the pull itself is tested against Debian's docker-registry
in tests/integration/test_distros.py. Golden files: tests/cases/render/<family>/Dockerfile
(REPLAY_UPDATE_GOLDEN=1 rewrites them).
"""
from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from runner.build.sources.baseimage import base_ref, choose_base
from runner.capsules.model import Platform
from runner.config import Settings
from runner.errors import CapsuleError
from runner.build.plan import BaseImage, Plan, Runtime
from runner.build.plancodec import plan_from_json, plan_to_json
from runner.build.sources.providers import distros
from runner.build.render import render

GOLDEN = Path(__file__).resolve().parents[3] / "cases" / "render"
UBUNTU = Platform(os="linux", distro="ubuntu", distro_version="22.04", libc="glibc", libc_version="2.35")
ALPINE = Platform(os="linux", distro="alpine", distro_version="3.20.3", libc="musl", libc_version="1.2.5")


class Registry:
    """Serves the manifests of the images named, optionally only with a Bearer token."""

    def __init__(self, images: set[str], token: bool = False) -> None:
        self.images, self.token, self.asked = images, token, list[str]()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
                registry.asked.append(self.path)
                parts = self.path.split("/")  # /v2/library/NAME/manifests/TAG
                if registry.token and self.headers.get("Authorization") != "Bearer t0k3n":
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", f'Bearer realm="{registry.url}/token",service="reg",'
                                                         f'scope="repository:library/{parts[3]}:pull"')
                else:
                    self.send_response(200 if f"{parts[3]}:{parts[5]}" in registry.images else 404)
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802
                body = b'{"token": "t0k3n"}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"http://{self.address}"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    reg = Registry({"ubuntu:22.04", "fedora:40"})
    thread = threading.Thread(target=reg.server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("REPLAY_REGISTRY", reg.address)
    distros.available.cache_clear()
    yield reg
    reg.server.shutdown()
    reg.server.server_close()
    distros.available.cache_clear()


def test_a_served_distro_gets_its_official_image(registry: Registry) -> None:
    base, rows = choose_base(UBUNTU, "3.10.12")
    assert (base.distro, base.image, base.family, base.python) == ("ubuntu", "ubuntu:22.04", "apt", "3.10.12")
    assert rows[0].fact == "platform distro" and rows[0].status == "exact" and "ubuntu:22.04" in rows[0].replayed
    assert registry.asked == ["/v2/library/ubuntu/manifests/22.04"]
    assert base_ref(Settings(), base) == "replay-base/ubuntu:22.04"


def test_a_registry_asking_for_a_token_gets_one_asked(registry: Registry) -> None:
    registry.token = True
    base, _ = choose_base(dataclasses.replace(UBUNTU, distro="fedora", distro_version="40", libc_version="2.39"))
    assert (base.image, base.family) == ("fedora:40", "dnf")
    assert len(registry.asked) == 2  # once refused with the realm, once with the token


def test_an_image_the_registry_lacks_falls_back_to_debian_saying_why(registry: Registry) -> None:
    base, rows = choose_base(ALPINE)
    assert (base.distro, base.image) == ("debian", "")
    assert rows[0].status == "approximated" and "alpine:3.20 is not served by" in rows[0].why


def test_no_registry_falls_back_to_the_nearest_glibc_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_REGISTRY", "none")
    base, rows = choose_base(UBUNTU)
    assert base.suite == "bookworm" and base.image == ""
    assert "REPLAY_REGISTRY=none" in rows[0].why and rows[0].status == "approximated"


def test_an_unreachable_registry_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_REGISTRY", "127.0.0.1:9")  # discard port: nothing listens
    distros.available.cache_clear()
    base, rows = choose_base(UBUNTU)
    assert base.image == "" and "not reachable" in rows[0].why


def test_an_unknown_release_is_not_guessed(registry: Registry) -> None:
    base, rows = choose_base(dataclasses.replace(UBUNTU, distro_version="18.10"))
    assert base.image == "" and "no known official image for ubuntu 18.10" in rows[0].why
    assert registry.asked == []


def test_a_mirror_pulls_under_library_and_docker_hub_by_name() -> None:
    assert distros.pull_ref("127.0.0.1:5000", "alpine:3.20") == ("127.0.0.1:5000/library/alpine", "3.20")
    assert distros.pull_ref(distros.HUB, "alpine:3.20") == ("alpine", "3.20")


# -- the plan stays portable and checked -------------------------------------------------------

def family_plan(base: BaseImage) -> Plan:
    return Plan(title="distro golden", capsule_id="d15720", base=base, argv=("python3", "check.py"),
                runtimes=(Runtime("python", base.python, base.python, "debian", True),),
                locales=("de_DE.UTF-8",), faketime=True)


def official(distro: str, version: str) -> BaseImage:
    base = distros.official(distro, version)
    assert base is not None
    return base


def test_an_old_plan_without_family_reads_as_apt() -> None:
    data = plan_to_json(family_plan(BaseImage("debian", "bookworm", "12", "2.36", "3.11.2")))
    del data["base"]["family"], data["base"]["image"]
    assert plan_from_json(data).base.family == "apt"


@pytest.mark.parametrize("field,value", [
    ("image", "ubuntu:22.04\nRUN touch /pwned"), ("image", "evil.example/ubuntu:22.04"), ("image", "fedora:40"),
    ("family", "yum"), ("family", "apk")])
def test_a_hostile_or_inconsistent_base_is_refused(field: str, value: str) -> None:
    data = plan_to_json(family_plan(official("ubuntu", "22.04")))
    data["base"][field] = value
    with pytest.raises(CapsuleError, match="base"):
        plan_from_json(data, "plan.json")


def test_a_debian_suite_never_names_an_image_family() -> None:
    data = plan_to_json(family_plan(BaseImage("debian", "bookworm", "12", "2.36", "3.11.2")))
    data["base"]["distro"] = "alpine"
    with pytest.raises(CapsuleError, match="only Debian suites"):
        plan_from_json(data, "plan.json")


# -- golden Dockerfiles, one per package manager ------------------------------------------------

@pytest.mark.parametrize("family,distro,version", [
    ("dnf", "fedora", "40"), ("pacman", "archlinux", "rolling"), ("apk", "alpine", "3.20"), ("apt", "ubuntu", "22.04")])
def test_the_system_layer_is_written_for_the_package_manager(family: str, distro: str, version: str,
                                                             tmp_path: Path) -> None:
    base = official(distro, version)
    assert base.family == family
    settings = Settings(ca_files=(Path("/etc/replay/proxy-ca.crt"),), cache_dir=tmp_path, base_repo="replay-base/debian")
    text = render(family_plan(base), settings)
    golden = GOLDEN / family / "Dockerfile"
    if os.environ.get("REPLAY_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()
    assert f"FROM replay-base/{base.image}\n" in text


def test_alpine_is_not_used_for_a_runtime_only_built_for_glibc(registry: Registry) -> None:
    registry.images.add("alpine:3.20")
    assert choose_base(ALPINE, needs={"python"})[0].image == "alpine:3.20"
    base, rows = choose_base(ALPINE, needs={"node", "python"})
    assert base.image == "" and "the node builds replay installs need glibc" in rows[0].why

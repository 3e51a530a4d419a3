"""The runner image (the top-level Dockerfile, built by runner.ci.runner_image with replay's CA
certificates): `replay` inside it drives the host's engine through the mounted socket, and
everything reaches the replayed containers through the engine — a twin capsule and a
CodeInstances instance (the HTTP sidecar, its CA, the clock) both reproduce."""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.ci.runner_image import CA_DIR, prepare_context, source_root
from runner.engine import DockerEngine, Mount

from tests.integration.runner_image import run_in_image

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def label(engine: DockerEngine) -> Iterator[str]:
    value = f"test-runner-{uuid.uuid4().hex[:8]}"
    yield value
    engine.cleanup(value)


def envelope(stdout: bytes) -> dict:
    return json.loads(stdout)


def test_the_context_carries_the_ca_certificates_and_the_base(tmp_path: Path) -> None:
    ca = tmp_path / "proxy.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    ctx = prepare_context(source_root(), tmp_path / "ctx", (ca,), "replay-base/debian:bookworm")
    assert (ctx / CA_DIR / "replay-ca-00.crt").read_bytes() == ca.read_bytes()
    dockerfile = (ctx / "Dockerfile").read_text()
    assert "ARG BASE=replay-base/debian:bookworm\n" in dockerfile and "update-ca-certificates" in dockerfile
    assert not (ctx / "tests").exists() and (ctx / "runner" / "cli" / "replaying.py").is_file()


def test_a_twin_capsule_reproduces_from_inside_the_runner_image(engine: DockerEngine, label: str) -> None:
    examples = Mount(str(ROOT / "examples"), "/w", True)
    res = run_in_image(engine, label, ["replay", "tz-clock/capsule.json", "--repo", "tz-clock/repo.bundle", "--json",
                                       "--attempts", "1"], [examples])
    assert res.exit_code == 0, res.output[-3000:]
    result = envelope(res.stdout)["result"]
    assert result["verdict"] == "reproduced" and result["capsule"]["format"] == "twin"


def test_a_codeinstances_instance_with_the_http_sidecar_reproduces_from_inside(engine: DockerEngine, label: str) -> None:
    fixtures = Mount(str(ROOT / "tests/fixtures/examples/codeinstances"), "/w", True)
    res = run_in_image(engine, label, ["replay", "fetch-greeting.json", "--json", "--attempts", "2"], [fixtures])
    assert res.exit_code == 0, res.output[-3000:]
    result = envelope(res.stdout)["result"]
    assert result["verdict"] == "reproduced"
    assert [c["outcome"] for c in result["http"]["served"]] == ["response 200"]  # served over HTTPS by the sidecar
    assert [a["classification"] for a in result["attempts"]] == ["recorded", "recorded"]

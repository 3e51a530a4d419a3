"""The wheel carries templates/ and images/ (top-level folders, force-included)."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_templates_and_images(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("replay_runner-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("runner/templates/Dockerfile.j2", "runner/templates/scripts/npm-deps.js",
                   "runner/templates/scripts/check-sha256", "runner/images/httpreplay/server.py",
                   "runner/images/httpreplay/Dockerfile", "runner/capsules/schemas/run-capsule.schema.json", "runner/schemas/envelope.schema.json",
                   "runner/schemas/run.schema.json",
                   "runner/py.typed"):
        assert needed in names, f"{needed} missing from {wheel.name}"


def test_resources_found_from_an_installed_layout(tmp_path: Path, monkeypatch) -> None:
    """Installed from the wheel, runner/templates is used (no repository around it)."""
    import runner.resources as res

    pkg = tmp_path / "site" / "runner"
    (pkg / "templates").mkdir(parents=True)
    (pkg / "images").mkdir()
    monkeypatch.setattr(res, "_PKG", pkg)
    assert res.templates_dir() == pkg / "templates"
    assert res.images_dir() == pkg / "images"


def test_pip_install_in_a_fresh_venv_gives_a_working_replay(tmp_path: Path) -> None:
    """As a new user: `pip install .` into a fresh venv, then replay works away from the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    replay = str(venv / "bin" / "replay")
    fixture = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"
    out = subprocess.run([replay, "verify", str(fixture)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    # the Dockerfile template is found inside the installed package, not in the checkout
    rendered = subprocess.run([replay, "render", str(fixture)], capture_output=True, text=True, cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.startswith("# replay ") and "FROM replay-base/debian:bookworm" in rendered.stdout

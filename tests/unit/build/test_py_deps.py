"""templates/scripts/py-deps.py, the build's Python drift helper, run with this interpreter
(report mode and the uv project sync's arguments: nothing is installed); its decision for one
recorded package imported as the build runs it."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from runner.resources import templates_dir

SCRIPT = templates_dir() / "scripts" / "py-deps.py"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def helper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("py_deps", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_drift_is_what_differs_from_the_installed_versions_and_merges_with_node_drift(tmp_path: Path) -> None:
    typer = metadata.version("typer")
    pins = tmp_path / "pins.txt"
    # typer differs, Jinja2 (PEP 503 name) matches, the project itself is not installed: named unpinned
    pins.write_text(f"typer==0.0.1\njinja2=={metadata.version('jinja2')}\nmy-project==1.0\n")
    drift = tmp_path / "drift.json"
    node_unpinned = {"name": "left-pad", "recorded": "1.3.0", "why": "the lockfile does not install it"}
    drift.write_text(json.dumps({"mode": "pin", "drift": [{"name": "lodash", "recorded": "1", "installed": "2"}],
                                 "unpinned": [node_unpinned]}))
    proc = run("pin", pins, drift, "report", "yes")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(drift.read_text()) == {"mode": "pin", "python_mode": "report", "drift": [
        {"name": "lodash", "recorded": "1", "installed": "2"},
        {"name": "typer", "recorded": "0.0.1", "installed": typer, "ecosystem": "python"}], "unpinned": [
        node_unpinned,
        {"name": "my-project", "recorded": "1.0", "why": "the lockfile does not install it", "ecosystem": "python"}]}
    assert "1 Python package(s) drifted" in proc.stdout
    assert "replay: not pinned: my-project 1.0: the lockfile does not install it" in proc.stdout
    # a second build step (the report rewritten) replaces the Python entries, keeps node's
    pins.write_text(f"typer=={typer}\n")
    assert run("pin", pins, drift, "report", "yes").returncode == 0
    report = json.loads(drift.read_text())
    assert report["unpinned"] == [node_unpinned] and report["drift"] == [
        {"name": "lodash", "recorded": "1", "installed": "2"}]


def test_without_a_lockfile_nothing_is_unpinned(tmp_path: Path) -> None:
    pins, drift = tmp_path / "pins.txt", tmp_path / "drift.json"
    pins.write_text("")  # nothing to install: pip is not run
    assert run("pin", pins, drift, "pin", "no").returncode == 0
    assert json.loads(drift.read_text()) == {"mode": "pin", "python_mode": "pin", "drift": [], "unpinned": []}


@pytest.mark.parametrize(("installed", "source", "expected"), [
    ("1.16.0", None, {"ok": True}),
    ("1.16.0", "a git checkout", {"ok": True}),  # as recorded: nothing to move, wherever it came from
    ("1.15.0", None, {"pin": True}),
    (None, None, {"why": "the lockfile does not install it"}),
    ("1.15.0", "a git checkout",
     {"why": "the lockfile installs 1.15.0 from a git checkout, not from an index: pip would replace it with the "
             "index's 1.16.0"}),
])
def test_one_recorded_package_is_kept_pinned_or_named_with_the_reason(
        helper: ModuleType, installed: str | None, source: str | None, expected: dict[str, Any]) -> None:
    assert helper.decide("1.16.0", installed, source) == expected


@pytest.mark.parametrize(("info", "kind"), [
    ({"url": "https://tok@github.com/o/r.git", "vcs_info": {"vcs": "git", "commit_id": "ab"}}, "a git checkout"),
    ({"url": "https://x", "vcs_info": {"vcs": "$(rm -rf /)"}}, "a VCS checkout"),
    ({"url": "file:///work/repo", "dir_info": {"editable": True}}, "a local directory (editable)"),
    ({"url": "file:///wheels/x", "dir_info": {}}, "a local directory"),
    ({"url": "https://example.com/x-1.0.tar.gz", "archive_info": {}}, "an archive URL"),
    ({"url": "https://example.com"}, None),
    ([], None),
])
def test_where_a_distribution_came_from_is_named_by_kind_never_by_url(
        helper: ModuleType, info: Any, kind: str | None) -> None:
    assert helper.source_kind(info) == kind


def test_a_package_installed_from_a_checkout_is_listed_as_drift_and_left_alone(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MODE=pin: the drifted package with a checkout as its source is named, and pip installs nothing."""
    pins, drift = tmp_path / "pins.txt", tmp_path / "drift.json"
    pins.write_text("six==1.16.0\n")
    monkeypatch.setattr(helper, "installed_versions", lambda: {"six": "1.15.0"})
    monkeypatch.setattr(helper, "direct_sources", lambda: {"six": "a git checkout"})
    monkeypatch.setattr(helper, "pip_install", lambda specs: pytest.fail(f"pip ran: {specs}"))
    helper.pin(str(pins), str(drift), "pin", "yes")
    report = json.loads(drift.read_text())
    assert report["drift"] == [{"name": "six", "recorded": "1.16.0", "installed": "1.15.0", "ecosystem": "python"}]
    assert report["unpinned"] == [{"name": "six", "recorded": "1.16.0", "installed": "1.15.0", "ecosystem": "python",
                                   "why": "the lockfile installs 1.15.0 from a git checkout, not from an index: "
                                          "pip would replace it with the index's 1.16.0"}]


def test_uv_sync_keeps_the_pinned_packages_only(helper: ModuleType, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    drift = tmp_path / "drift.json"
    drift.write_text(json.dumps({"python_mode": "pin", "drift": [
        {"name": "six", "recorded": "1.15.0", "installed": "1.16.0", "ecosystem": "python"},
        {"name": "attrs", "recorded": "1", "installed": "2", "ecosystem": "python"},
        {"name": "ms", "recorded": "1", "installed": "2"}],
        "unpinned": [{"name": "attrs", "recorded": "1", "why": "...", "ecosystem": "python"}]}))
    ran: list[list[str]] = []
    monkeypatch.setattr(helper.subprocess, "run", lambda cmd: ran.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    helper.uv_sync(str(drift))
    assert ran == [["uv", "sync", "--frozen", "--inexact", "--no-install-package", "six"]]


def test_bad_arguments_exit_2() -> None:
    assert run("pin", "only-one").returncode == 2


def test_an_sdist_among_the_downloads_is_built_into_a_wheel_before_the_offline_install(
        helper: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setattr(helper, "WHEELS", str(wheels))
    calls: list[list[str]] = []
    out = (f"Collecting GPyOpt==1.2.6\n  File was already downloaded {wheels}/GPyOpt-1.2.6.tar.gz\n"
           f"Collecting six==1.16.0\nSaved {wheels}/six-1.16.0-py2.py3-none-any.whl\nSuccessfully downloaded GPyOpt six\n")

    def fake_run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        if "wheel" in cmd:  # pip wheel -w TMP: the built wheel appears there
            Path(cmd[cmd.index("-w") + 1], "GPyOpt-1.2.6-py3-none-any.whl").write_bytes(b"PK")
        return subprocess.CompletedProcess(cmd, 0, out if "download" in cmd else "")

    monkeypatch.setattr(helper.subprocess, "run", fake_run)
    assert helper.pip_cached(["--no-deps", "GPyOpt==1.2.6", "six==1.16.0"])
    download, build, install = calls
    assert "-q" not in download and download[-3:] == ["--no-deps", "GPyOpt==1.2.6", "six==1.16.0"]
    assert build[-1] == f"{wheels}/GPyOpt-1.2.6.tar.gz" and "--no-index" not in build  # the index is there
    built = helper.built_dir()
    assert built.startswith(f"{wheels}/built/{sys.implementation.cache_tag}-")
    assert install[install.index("--no-index") + 1:install.index("--no-index") + 5] == [
        "--find-links", built, "--find-links", str(wheels)]
    assert Path(built, "GPyOpt-1.2.6-py3-none-any.whl").is_file()
    calls.clear()  # a later build finds the wheel made before: nothing to build
    assert helper.pip_cached(["--no-deps", "GPyOpt==1.2.6", "six==1.16.0"]) and len(calls) == 2


def test_sdist_and_wheel_names_compare_normalised(helper: ModuleType) -> None:
    assert helper.stem("/w/GPyOpt-1.2.6.tar.gz") == helper.stem("gpyopt-1.2.6-py3-none-any.whl") == "gpyopt-1-2-6"
    assert helper.stem("zope.interface-6.0.zip") == helper.stem("zope_interface-6.0-cp311-cp311-linux_x86_64.whl")
    assert helper.fetched_files("Saved ./x-1.0.tar.gz\nnoise\n  File was already downloaded /w/y.whl\n") == [
        str(Path("x-1.0.tar.gz").resolve()), "/w/y.whl"]

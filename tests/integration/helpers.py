"""Builders for the replay integration tests: git repos, twin capsules as a recorder
writes them, and the CLI called in-process."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.verdict import signature as sig
from runner.cli.main import main
from runner.report import from_json, to_json
from tests.envelope import envelope_of, result_of

ROOT = Path(__file__).resolve().parents[2]
TZ_CLOCK = ROOT / "examples" / "tz-clock"
NOVA = ROOT / "tests" / "fixtures" / "examples" / "novafabric"

# A fixed identity and dates, so the commits (and so the image cache keys) are stable.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **_GIT_ENV},
                          capture_output=True, text=True, check=True)
    return proc.stdout


def git_repo(path: Path, files: Mapping[str, str]) -> str:
    """A one-commit repository holding these files; returns the commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return git(path, "rev-parse", "HEAD").strip()


def git_history(path: Path, commits: Sequence[tuple[Mapping[str, str], str]]) -> list[str]:
    """A repository of these commits ((files written, subject) each, the first the root); their ids."""
    shas = [git_repo(path, commits[0][0])]
    for files, subject in commits[1:]:
        for name, text in files.items():
            (path / name).write_text(text)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", subject)
        shas.append(git(path, "rev-parse", "HEAD").strip())
    return shas


def clone_tz_clock(dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(TZ_CLOCK / "repo.bundle"), str(dest))
    return dest


def env_facts(**facts: str | None) -> dict[str, dict[str, str]]:
    """NAME=value sets it, NAME=None records it absent."""
    return {name: ({"state": "absent"} if value is None else {"state": "set", "value": value})
            for name, value in facts.items()}


def twin_capsule(argv: Sequence[str], output: str, exit_code: int, *, python: str | None = None,
                 resolved_python: Mapping[str, str] | None = None, repo: dict[str, Any] | None = None,
                 env: Mapping[str, Any] | None = None, time_zone: str | None = None) -> dict[str, Any]:
    """A twin v1 capsule of a run on Debian 12, its failure fields computed from the output
    the command really printed, as twin's recorder does."""
    failure = None
    if exit_code != 0:
        fs = sig.compute(output, exit_code, None)
        failure = {"signature": fs.signature, "keyLines": list(fs.key_lines), "outputTail": sig.output_tail(output)}
    resolved: dict[str, Any] = {"node": {}}
    if resolved_python is not None:
        resolved["python"] = dict(resolved_python)
    return {
        "twin": 1, "createdAt": "2026-11-27T14:03:11.482Z", "generator": "twin 0.1.0",
        "command": {"argv": list(argv), "cwd": ".", "exitCode": exit_code, "signal": None, "durationMs": 120,
                    "outcome": "fail" if exit_code else "pass", "failure": failure},
        "os": {"platform": "linux", "arch": "x64", "release": "6.1.0-27-amd64", "distro": "debian",
               "distroVersion": "12", "libc": "glibc", "libcVersion": "2.36"},
        "runtimes": {"python": python} if python else {},
        "tools": {}, "packageManagers": [], "resolved": resolved, "repo": repo,
        "env": dict(env or {}),
        "locale": {"timeZone": time_zone, "locale": "en-US"},
        "redaction": {"rulesVersion": 2, "valuesIncluded": sorted(env or {}), "hashedValues": False, "scrubbed": {}},
    }


def nova_run(dest: Path, argv: Sequence[str], stdout: str, python: Mapping[str, Any],
             **manifest: Any) -> Path:
    """The minimal-run NovaFabric example copied to `dest`, running `argv` on Debian's Python 3.11.2:
    env.lock's python section updated with `python`, capsule.yaml with `manifest`, the recorded stdout."""
    shutil.copytree(NOVA / "minimal-run", dest)
    env = yaml.safe_load((dest / "env.lock").read_text())
    env["python"].update(version="3.11.2", **python)
    (dest / "env.lock").write_text(yaml.safe_dump(env))
    capsule = yaml.safe_load((dest / "capsule.yaml").read_text())
    capsule.update(command=list(argv), **manifest)
    capsule["host"]["python"] = "3.11.2"
    (dest / "capsule.yaml").write_text(yaml.safe_dump(capsule))
    (dest / "outputs" / "stdout.txt").write_text(stdout)
    return dest


def repo_fact(remote: str, commit: str, diff: str = "") -> dict[str, Any]:
    return {"remote": remote, "commit": commit, "branch": "main", "dirty": bool(diff), "diff": diff,
            "diffTruncated": False, "diffRedacted": False, "untracked": []}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2))
    return path


def with_local_repo(args: Sequence[str | Path]) -> list[str]:
    """As a user would: a capsule whose remote is a local clone or bundle is replayed with
    --repo naming it (replay refuses a capsule's own local remote)."""
    out = [str(a) for a in args]
    if "--repo" in out:
        return out
    for a in out:
        path = Path(a)
        if a.endswith(".json") and path.is_file():
            try:
                remote = (json.loads(path.read_text()).get("repo") or {}).get("remote")
            except (ValueError, AttributeError):
                return out
            if remote and Path(remote).exists():
                return [*out, "--repo", remote]
            return out
    return out


def replay(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, dict[str, Any]]:
    """`replay ARGS --json` in-process: the exit code and the parsed report."""
    rc = main(with_local_repo(args) + ["--json"])
    captured = capsys.readouterr()
    assert captured.out.strip(), f"no report on stdout (exit {rc}); stderr: {captured.err[-2000:]}"
    data = envelope_of(captured.out)
    assert data["exit_code"] == rc and data["command"] == "run", data["error"]
    report = result_of(captured.out)
    if report is not None:  # every report the suite produces reads back to the same JSON, byte for byte
        assert json.dumps(to_json(from_json(report))) == json.dumps(report)
    return rc, report


def replay_error(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, list[str]]:
    """`replay ARGS` expected to stop on an error: the exit code and its error lines."""
    rc = main(with_local_repo(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return rc, [line for line in captured.err.splitlines() if line.startswith("replay: error:")]


@contextlib.contextmanager
def own_image_repo(engine: Any, prefix: str) -> Iterator[str]:
    """Images built meanwhile go to a fresh repository (so they can be counted), removed after."""
    repo = f"{prefix}-{uuid.uuid4().hex[:8]}/img"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPLAY_IMAGE_REPO", repo)
        try:
            yield repo
        finally:
            for image in engine.client.images.list(name=repo):
                for tag in image.tags:
                    engine.client.images.remove(tag, force=True)


# -- secrets: a program that prints what it was given, and a search for it -------------------

SUPPLIED_NAME, RECORDED_NAME = "API_TOKEN", "DEPLOY_KEY"
# Prints the supplied value and the recorded one (a key line, too), and fails only when it got the supplied one.
SECRET_PRINTER = ["sh", "-c", f'echo "token=${SUPPLIED_NAME}"; echo "Error: deploy key ${RECORDED_NAME} refused"; '
                              f'test -n "${SUPPLIED_NAME}" && exit 3; exit 4']


def secret_marker() -> str:
    """A value to supply with --env, unique to this test run."""
    return f"s3cr3t-{uuid.uuid4().hex}"


def token_marker() -> str:
    """A value twin's secret rules scrub (a GitHub token), unique to this test run."""
    return "ghp_" + uuid.uuid4().hex + "Zq7X"


def secret_printer(path: Path, recorded_token: str | None = None) -> Path:
    """A twin capsule of SECRET_PRINTER, recorded as twin would have written it (scrubbed), with
    RECORDED_NAME's value recorded unscrubbed when given (an old or hostile recorder)."""
    output = "token=[supplied value]\nError: deploy key <redacted:github-token> refused\n"
    env = env_facts(**{RECORDED_NAME: recorded_token}) if recorded_token else None
    return write_json(path, twin_capsule(SECRET_PRINTER, output, 3, env=env))


def assert_no_marker(markers: Sequence[str], places: Mapping[str, bytes | str]) -> None:
    """None of the markers in any of the places (file contents, a process's output), byte for byte."""
    found = [(name, m) for name, data in places.items() for m in markers
             if m.encode() in (data.encode() if isinstance(data, str) else data)]
    assert not found, f"a secret leaked into: {found}"


def farm_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    """`replay farm ARGS --json` in this process: its exit code and its result (an error fails)."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["farm", *map(str, args), "--json"])
    doc = json.loads(out.getvalue())
    assert doc["exit_code"] == rc and doc["error"] is None, doc["error"]
    return rc, doc["result"]


# Two capsules of two unreachable remotes, and where mirrors of them are (the mirror and worker tests)
REMOTE_A = "https://git-a.unreachable.invalid/team/a.git"
REMOTE_B = "https://git-b.unreachable.invalid/b.git"
# prints the repository's file, then fails: the recorded failure comes back only from the right tree
CAT = ["sh", "-c", "cat msg.txt; exit 3"]


def make_night(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two capsules (remotes A and B), a bundle of A, a directory of bare repositories holding B."""
    caps = tmp_path / "caps"
    caps.mkdir()
    for name, remote in (("a", REMOTE_A), ("b", REMOTE_B)):
        text = f"served by mirror {name} ({uuid.uuid4().hex})\n"  # a commit of this test alone
        commit = git_repo(tmp_path / f"work-{name}", {"msg.txt": text})
        write_json(caps / f"{name}.json", twin_capsule(CAT, text, 3, repo=repo_fact(remote, commit)))
    git(tmp_path / "work-a", "bundle", "create", "-q", str(tmp_path / "a.bundle"), "--all")
    (tmp_path / "mirrors").mkdir()
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "work-b"), str(tmp_path / "mirrors" / "b.git"))
    return caps, tmp_path / "a.bundle", tmp_path / "mirrors"

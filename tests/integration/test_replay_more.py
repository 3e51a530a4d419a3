"""`replay CAPSULE` against the real Docker engine: the parts of issue 3 test_replay.py
leaves (lockfiles from another registry, drift, root scripts, --patch, --ref, partial
diffs, render by hand, cleanup).

Repositories are built from tests/cases/replay_more/ with fixed commit dates, so their
images come from the engine's cache on a second run; `-n 1` throughout.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from runner.capsules import read_capsule
from runner.errors import BuildFailed

from runner.build.plan import PlanOptions
from runner.replay import Progress, ReplayOptions, replay_capsule

from tests.integration.helpers import (ROOT, TZ_CLOCK, clone_tz_clock, git, git_repo, replay, replay_error, repo_fact, twin_capsule,
                      write_json)

pytestmark = pytest.mark.integration

CASES = ROOT / "tests" / "cases" / "replay_more"
TZ_CAPSULE = TZ_CLOCK / "capsule.json"
BUNDLE = TZ_CLOCK / "repo.bundle"
GREETING = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"
NODE = "22.23.3"  # the tz-clock example's: its download is cached already
IS_NUMBER_7_INTEGRITY = "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng=="


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


# -- builders ------------------------------------------------------------------

def case_repo(dest: Path, case: str, change: Callable[[dict[str, str]], None] = lambda files: None) -> str:
    """A one-commit repository holding the files of a case folder (after `change`)."""
    folder = CASES / case
    files = {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}
    change(files)
    return git_repo(dest, files)


def node_capsule(argv: list[str], output: str, exit_code: int, repo: Path, commit: str, *,
                 resolved_node: Mapping[str, str] | None = None, diff: str = "") -> dict[str, Any]:
    """A twin capsule of an npm project's run: Node, npm, the lockfile's hash as recorded."""
    data = twin_capsule(argv, output, exit_code, repo=repo_fact(str(repo), commit, diff))
    lock = git(repo, "show", f"{commit}:package-lock.json").encode()
    data["runtimes"] = {"node": NODE}
    data["tools"] = {"npm": "10.9.9"}
    data["packageManagers"] = [{"name": "npm", "ecosystem": "node", "version": "10.9.9", "declared": None,
                                "lockfile": "package-lock.json", "lockfileSha256": hashlib.sha256(lock).hexdigest()}]
    data["resolved"] = {"node": {name: [version] for name, version in (resolved_node or {}).items()}}
    return data


def tz_variant(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(TZ_CAPSULE.read_text())
    change(data)
    return write_json(tmp_path / "capsule.json", data)


def recorded_pass(data: dict[str, Any]) -> None:
    data["command"].update(exitCode=0, outcome="pass", failure=None)


def labelled(engine: Any, label: str) -> tuple[list[str], list[str]]:
    """Names of the containers and networks labelled replay=<label>."""
    flt = {"label": f"replay={label}"}
    return ([c.name for c in engine.client.containers.list(all=True, filters=flt)],
            [n.name for n in engine.client.networks.list(filters=flt)])


# -- 1. a lockfile resolved from an unreachable registry ----------------------

@pytest.fixture(scope="module")
def corp_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("corp") / "repo"
    return path, case_repo(path, "corp-lock")


@pytest.fixture(scope="module")
def tampered_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """corp-lock whose lockfile holds is-number 7.0.0's integrity for the 6.0.0 tarball."""
    def tamper(files: dict[str, str]) -> None:
        lock = json.loads(files["package-lock.json"])
        lock["packages"]["node_modules/is-number"]["integrity"] = IS_NUMBER_7_INTEGRITY
        files["package-lock.json"] = json.dumps(lock, indent=2) + "\n"

    path = tmp_path_factory.mktemp("tampered") / "repo"
    return path, case_repo(path, "corp-lock", tamper)


def test_a_lockfile_from_an_unreachable_registry_installs_through_the_configured_one(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, corp_repo: tuple[Path, str]) -> None:
    lock = json.loads((CASES / "corp-lock" / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/is-number"]["resolved"].startswith("https://npm.corp.example.com/")
    repo, commit = corp_repo
    capsule = write_json(tmp_path / "capsule.json", node_capsule(
        ["node", "show-version.js"], "", 0, repo, commit, resolved_node={"is-number": "6.0.0"}))
    rc, report = replay(capsys, capsule, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == "6.0.0\n"
    assert report["drift"] == []


def test_a_tampered_integrity_fails_the_build(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              tampered_repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, commit = tampered_repo
    # A download cache of its own: npm's cache is content-addressed, so once 7.0.0's tarball is
    # cached (the drift test pins it) npm ci serves those bytes, which do match the integrity.
    monkeypatch.setenv("REPLAY_BUILD_CACHE", f"test-{uuid.uuid4().hex[:10]}")
    capsule = write_json(tmp_path / "capsule.json", node_capsule(["node", "show-version.js"], "", 0, repo, commit))
    rc, errors = replay_error(capsys, capsule, "-n", "1")
    assert rc == 3
    assert len(errors) == 1
    assert "image build failed" in errors[0] and "integrity" in errors[0].lower(), errors


# -- 2. drift between the lockfile and the recorded installed tree ------------

@pytest.mark.parametrize("flags, installed", [((), "7.0.0"), (("--no-pin",), "6.0.0")])
def test_drift_from_the_lockfile_is_pinned_unless_no_pin(engine: object, capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path, corp_repo: tuple[Path, str],
                                                         flags: tuple[str, ...], installed: str) -> None:
    repo, commit = corp_repo
    capsule = write_json(tmp_path / "capsule.json", node_capsule(
        ["node", "show-version.js"], "", 0, repo, commit, resolved_node={"is-number": "7.0.0"}))
    rc, report = replay(capsys, capsule, "-n", "1", *flags)
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == f"{installed}\n"
    assert report["drift"] == [{"name": "is-number", "recorded": "7.0.0", "installed": "6.0.0"}]


def test_without_an_installable_lockfile_the_recorded_versions_are_installed(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # bun.lockb: recorded, not installable here; the fidelity table promises the resolved versions instead.
    data = twin_capsule(["node", "-p", "require('is-number/package.json').version"], "", 0)
    data.update(runtimes={"node": NODE}, resolved={"node": {"is-number": ["7.0.0"]}}, packageManagers=[
        {"name": "bun", "ecosystem": "node", "version": "1.1.0", "declared": None, "lockfile": "bun.lockb",
         "lockfileSha256": None}])
    rc, report = replay(capsys, write_json(tmp_path / "capsule.json", data), "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == "7.0.0\n"
    row = next(f for f in report["fidelity"] if f["fact"] == "lockfile")
    assert (row["recorded"], row["status"]) == ("bun.lockb", "not applied")


# -- 3. the root's lifecycle scripts run once the source is there -------------

LIFECYCLE = "lifecycle: preinstall postinstall prepare postprepare\n"  # each once, in `npm ci`'s order

def test_the_root_prepare_script_runs_on_the_restored_source(engine: object, capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = case_repo(repo, "prepare")
    (repo / "src" / "message.txt").write_text("second message\n")
    diff = git(repo, "diff", "HEAD", "--binary")
    argv = ["node", "show.js"]
    clean = write_json(tmp_path / "clean.json", node_capsule(argv, "", 0, repo, commit))
    rc, report = replay(capsys, clean, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == f"generated from src: first message\n{LIFECYCLE}"
    # Only the source changes (package.json and the lockfile do not): prepare runs again on it.
    dirty = write_json(tmp_path / "dirty.json", node_capsule(argv, "", 0, repo, commit, diff=diff))
    rc, report = replay(capsys, dirty, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]
    assert report["attempts"][0]["stdout"] == f"generated from src: second message\n{LIFECYCLE}"


# -- 4. --patch ----------------------------------------------------------------

@pytest.fixture(scope="module")
def tz_patches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real `git diff` patches against the tz-clock example: the UTC fix, a comment-only
    change, and one written against another version of src/dates.js."""
    tmp = tmp_path_factory.mktemp("patches")
    clone = clone_tz_clock(tmp / "tz-clock")
    dates = clone / "src" / "dates.js"
    original = dates.read_text()

    def patch(name: str, text: str) -> Path:
        dates.write_text(text)
        out = tmp / f"{name}.diff"
        out.write_text(git(clone, "diff", "HEAD", "--binary"))
        dates.write_text(original)
        return out

    fixed = original
    for getter in ("FullYear", "Month", "Date"):
        fixed = fixed.replace(f"d.get{getter}()", f"d.getUTC{getter}()")
    assert fixed != original
    stale = patch("stale", original.replace("Math.floor", "Math.trunc"))
    stale.write_text(stale.read_text().replace("function startOfDay(ms)", "function startOfDay(ms, zone)"))
    return {"fix": patch("fix", fixed), "comment": patch("comment", original.replace("Bug:", "Known bug:")),
            "stale": stale}


@pytest.mark.parametrize("patch, rc, verdict, exit_codes", [("fix", 0, "fixed", [0] * 5),
                                                             ("comment", 1, "not-fixed", [1])])
def test_a_patch_is_judged_fixed_or_not_fixed(engine: object, capsys: pytest.CaptureFixture[str],
                                              tz_patches: dict[str, Path], patch: str, rc: int, verdict: str,
                                              exit_codes: list[int]) -> None:
    """Stopping when decided: 3 unpatched failures, then 5 straight passes make a fix (3 would be
    luck), and the first failure as recorded makes none."""
    got_rc, report = replay(capsys, TZ_CAPSULE, "--repo", BUNDLE, "--patch", tz_patches[patch])
    assert (got_rc, report["verdict"]) == (rc, verdict)
    assert [a["exit_code"] for a in report["baseline"]["attempts"]] == [1, 1, 1]
    assert [a["exit_code"] for a in report["attempts"]] == exit_codes


def test_a_patch_that_does_not_apply_is_one_error_line(engine: object, capsys: pytest.CaptureFixture[str],
                                                       tz_patches: dict[str, Path]) -> None:
    rc, errors = replay_error(capsys, TZ_CAPSULE, "--repo", BUNDLE, "-n", "1", "--patch", tz_patches["stale"])
    assert rc == 3
    assert len(errors) == 1
    assert "--patch does not apply" in errors[0], errors


# -- 5. --ref ------------------------------------------------------------------

def test_another_commit_with_ref(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The example's parent commit ran `node --test test/`, which Node 22 reads as a module
    path. The recorded command must be `npm test` for package.json's script to matter (the
    example's own capsule runs node directly, so it reproduces at either commit)."""
    parent = git(clone_tz_clock(tmp_path / "tz-clock"), "rev-parse", "HEAD~1").strip()
    output = (CASES / "tz-clock-npm-test.out.txt").read_text()
    data = json.loads(TZ_CAPSULE.read_text())
    data["command"] = twin_capsule(["npm", "test"], output, 1)["command"]
    capsule = write_json(tmp_path / "capsule.json", data)
    rc, report = replay(capsys, capsule, "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]  # the control, at the recorded commit
    rc, report = replay(capsys, capsule, "--repo", BUNDLE, "-n", "1", "--ref", parent)
    assert (rc, report["verdict"]) == (1, "different-failure")
    assert "Cannot find module '/work/repo/test'" in report["attempts"][0]["output_tail"]
    rows = [f for f in report["fidelity"] if f["fact"] == "repo commit"]
    assert [(r["replayed"], r["status"]) for r in rows] == [(parent, "not applied")]
    assert "--ref" in rows[0]["why"]


# -- 6. a recorded diff that does not apply fully ------------------------------

@pytest.fixture(scope="module")
def tz_diffs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`git diff HEAD --binary` of the tz-clock example: the UTC fix in src/dates.js plus a
    change to package.json's description, and the same with a nonce in the test file."""
    clone = clone_tz_clock(tmp_path_factory.mktemp("diffs") / "tz-clock")
    dates = clone / "src" / "dates.js"
    fixed = dates.read_text()
    for getter in ("FullYear", "Month", "Date"):
        fixed = fixed.replace(f"d.get{getter}()", f"d.getUTC{getter}()")
    dates.write_text(fixed)
    pkg = clone / "package.json"
    pkg.write_text(pkg.read_text().replace("only in some time zones", "only in some time zones (token ghp_x)"))
    with (clone / "test" / "dates.test.js").open("a") as fh:
        fh.write("// one\n// two\n// three\n")
    full = git(clone, "diff", "HEAD", "--binary")
    files = full.split("diff --git ")
    assert [f.split(" ")[0] for f in files[1:]] == ["a/package.json", "a/src/dates.js", "a/test/dates.test.js"]
    return {"full": full, "without_test": "diff --git ".join(files[:3])}


def test_a_redacted_diff_applies_as_far_as_it_goes(engine: object, capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path, tz_diffs: dict[str, str]) -> None:
    # The recorder scrubbed the token in package.json, on both sides of the change: that
    # hunk no longer matches the commit, the one in src/dates.js still does.
    scrubbed = tz_diffs["without_test"].replace("only in some time zones\"", "only in some [REDACTED]\"")
    assert scrubbed != tz_diffs["without_test"]

    def redacted_pass(d: dict[str, Any]) -> None:
        recorded_pass(d)
        d["repo"].update(dirty=True, diff=scrubbed, diffRedacted=True)

    rc, report = replay(capsys, tz_variant(tmp_path, redacted_pass), "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]  # the fix in src/dates.js is there
    assert any("redacted" in n for n in report["notes"]), report["notes"]
    assert any("partially" in n and "package.json" in n for n in report["notes"]), report["notes"]


def test_a_truncated_diff_applies_up_to_the_cut(engine: object, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, tz_diffs: dict[str, str]) -> None:
    # Cut at a line boundary inside the last hunk (the test file's), as twin cuts at 200,000 bytes.
    lines = tz_diffs["full"].splitlines(keepends=True)
    cut = "".join(lines[:-2])
    assert cut.rstrip().endswith("// one")

    def truncated_pass(d: dict[str, Any]) -> None:
        recorded_pass(d)
        d["repo"].update(dirty=True, diff=cut, diffTruncated=True)

    rc, report = replay(capsys, tz_variant(tmp_path, truncated_pass), "--repo", BUNDLE, "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"]  # the fix before the cut is there
    assert any("truncated" in n and "test/dates.test.js" in n for n in report["notes"]), report["notes"]


# -- 7. render, then build by hand ---------------------------------------------

@pytest.fixture
def hand_tag(engine: Any) -> Iterator[str]:
    tag = f"replay-test-render:{uuid.uuid4().hex[:12]}"
    yield tag
    subprocess.run(["/usr/bin/docker", "rmi", tag], capture_output=True)  # removes the tag only when shared


def test_a_rendered_context_builds_by_hand(engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           hand_tag: str) -> None:
    from runner.cli.main import main

    out = tmp_path / "ctx"
    assert main(["render", str(TZ_CAPSULE), "--repo", str(BUNDLE), "-o", str(out)]) == 0
    assert f" {out}" in capsys.readouterr().out.splitlines()[0]  # the by-hand `docker build -t TAG DIR` line
    build = subprocess.run(["/usr/bin/docker", "build", "-q", "-t", hand_tag, "--label", "replay=test", str(out)],
                           env={**os.environ, "DOCKER_BUILDKIT": "1"}, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run(["/usr/bin/docker", "run", "--rm", "--network", "none", "-e", "TZ=America/New_York",
                          "-w", "/work/repo", hand_tag, "node", "--test", "test/dates.test.js"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "+ '2025-12-31'" in run.stdout


# -- 8. cleanup ----------------------------------------------------------------

@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private temporary directory, to see what a replay leaves behind there."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_a_replay_with_a_replay_network_leaves_nothing(engine: Any, tmp_path: Path, own_tmp: Path) -> None:
    label = f"test-{uuid.uuid4().hex[:10]}"
    argv = list(read_capsule(GREETING).command.argv)
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(argv, "", 0, python="3.11.2"))
    seen: list[tuple[list[str], list[str]]] = []
    progress = Progress()
    step = progress.step

    def spying_step(name: str) -> Any:  # what exists while the attempt runs
        if name.startswith("attempt"):
            seen.append(labelled(engine, label))
        return step(name)

    progress.step = spying_step  # type: ignore[method-assign]
    opts = ReplayOptions(attempts=1, label=label, plan=PlanOptions(http=read_capsule(GREETING)))
    report = replay_capsule(capsule, opts, progress)
    assert report.verdict == "reproduced", report.attempts
    assert len(seen) == 1 and seen[0][0] and seen[0][1], seen  # a sidecar and a network existed
    assert labelled(engine, label) == ([], [])
    assert list(own_tmp.iterdir()) == []


def test_a_failing_build_leaves_nothing(engine: Any, tmp_path: Path, own_tmp: Path,
                                        corp_repo: tuple[Path, str]) -> None:
    label = f"test-{uuid.uuid4().hex[:10]}"
    repo, commit = corp_repo
    data = node_capsule(["node", "show-version.js"], "", 0, repo, commit)
    data["packageManagers"][0]["lockfileSha256"] = hashlib.sha256(b"another lockfile").hexdigest()
    capsule = write_json(tmp_path / "capsule.json", data)  # the build stops at the lockfile check
    with pytest.raises(BuildFailed):
        replay_capsule(capsule, ReplayOptions(attempts=1, label=label, plan=PlanOptions(repo=str(repo))), Progress())
    assert labelled(engine, label) == ([], [])
    assert list(own_tmp.iterdir()) == []


def test_ctrl_c_during_an_attempt_cleans_up(engine: Any, tmp_path: Path) -> None:
    nonce = uuid.uuid4().hex
    # sh's sleep: Python's time.sleep fails (EINVAL) under the recorded clock's libfaketime.
    argv = ["sh", "-c", f"sleep 120; : {nonce}"]
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(argv, "", 0))
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "-n", "1", "--http", str(GREETING)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        label = _wait_for_container(engine, nonce, proc)
        assert labelled(engine, label)[1], "the replay network exists while the attempt runs"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert labelled(engine, label) == ([], [])
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr


def _wait_for_container(engine: Any, nonce: str, proc: subprocess.Popen[str], limit: float = 180.0) -> str:
    """The replay label of the attempt container whose command holds the nonce."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for ctr in engine.client.containers.list(filters={"label": "replay"}):
            if any(nonce in arg for arg in ctr.attrs["Config"]["Cmd"] or []):
                return str(ctr.labels["replay"])
        if proc.poll() is not None:
            pytest.fail(f"replay ended (exit {proc.returncode}) before its attempt ran: {proc.stderr.read()[-2000:]}")
        time.sleep(0.3)
    pytest.fail("no attempt container appeared")

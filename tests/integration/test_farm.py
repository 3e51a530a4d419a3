"""`replay farm` end to end on the real engine (issue 10): a folder of capsules of all
three formats, --ref, a flaky command, SIGKILL and --resume, two nights.

The capsules are python one-liners (twin and CodeInstances) that share one image, and
the sealed NovaFabric example (its own image: its inputs are in it). Images go to a
repository of this module's own, so builds can be counted, and are removed after.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main

from tests.unit.farm.builders import py_twin, write_instance
from tests.integration.helpers import NOVA, ROOT, git, git_repo, own_image_repo, repo_fact
from tests.envelope import envelope_of

pytestmark = pytest.mark.integration

SEALED = NOVA / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"
TZ_CODE = "import os, sys\nz = os.environ.get('TZ')\nprint('tz', z)\nsys.exit(0 if z == 'UTC' else 3)"
COIN = "import random, sys\nif random.random() < 0.5:\n    print('Error: the coin came up tails')\n    sys.exit(1)\nprint('heads')"
CHECK_BAD = "import sys\nprint('Error: value is 41, expected 42')\nsys.exit(1)\n"
CHECK_GOOD = "print('value is 42')\n"


@pytest.fixture(scope="module", autouse=True)
def own_images(engine: Any) -> Iterator[str]:
    """A fresh image repository for this module (so builds are countable), removed after."""
    with own_image_repo(engine, "replay-test-farm") as repo, pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "250")
        yield repo


def farm(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, dict[str, Any]]:
    """`replay farm ARGS --json` in-process: the exit code and the envelope's result."""
    rc = main(["farm", *map(str, args), "--json"])
    doc = envelope_of(capsys.readouterr().out)
    assert doc["exit_code"] == rc and doc["error"] is None, doc["error"]
    return rc, doc["result"]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(r["path"]).name: r for r in result["results"]}


def attempt_counts(db: Path, state: str = "finished") -> Counter[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT capsule_id, side FROM attempts WHERE state = ?", (state,)).fetchall()
    return Counter((c, s) for c, s in rows)


# -- a folder of all three formats ------------------------------------------------------

@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("farm") / "capsules"
    py_twin(root / "twin" / "tz-new-york.json", TZ_CODE, "tz America/New_York\n", 3, tz="America/New_York")
    py_twin(root / "twin" / "tz-utc.json", TZ_CODE, "tz UTC\n", 3, tz="UTC")  # passes under UTC
    py_twin(root / "twin" / "other-failure.json", "import sys; print('Error: quota exceeded'); sys.exit(3)",
            "Error: disk full\n", 3)
    write_instance(root / "ci" / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    (root / "copies").mkdir()
    shutil.copy(root / "ci" / "hello.json", root / "copies" / "hello.json")  # the same capsule twice
    write_instance(root / "ci" / "wrong-stdout.json", ["python3", "-c", "print('hello')"], "goodbye\n")
    shutil.copytree(SEALED, root / "nova" / "sealed")
    shutil.copytree(SEALED, root / "nova" / "tampered")
    with (root / "nova" / "tampered" / "inputs" / "poem.txt").open("a") as f:
        f.write("a line added after sealing\n")
    return root


@pytest.fixture(scope="module")
def first_night(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    db = tmp_path_factory.mktemp("db") / "farm.sqlite"
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["farm", "run", str(folder), "--db", str(db), "--jobs", "2", "--json"])
    return rc, envelope_of(out.getvalue()), db


def test_every_capsule_gets_its_verdict_and_the_tampered_one_is_broken(
        first_night: tuple[int, dict[str, Any], Path], folder: Path) -> None:
    rc, doc, _ = first_night
    assert (rc, doc["schema"], doc["exit_code"]) == (0, "replay.farm-run/1", 0), doc
    got = {name: r["verdict"] for name, r in by_name(doc["result"]).items()}
    assert got == {"tz-new-york.json": "reproduced", "tz-utc.json": "not-reproduced",
                   "other-failure.json": "different-failure", "hello.json": "reproduced",
                   "wrong-stdout.json": "not-reproduced", "sealed": "reproduced", "tampered": "broken"}
    results = by_name(doc["result"])
    assert "does not verify" in results["tampered"]["reason"] and "poem.txt" in results["tampered"]["reason"]
    assert results["hello.json"]["path"] == str(folder / "ci" / "hello.json")
    assert results["hello.json"]["also_at"] == [str(folder / "copies" / "hello.json")]
    assert results["other-failure.json"]["signature"] != results["other-failure.json"]["recorded_signature"]
    assert {r["format"] for r in doc["result"]["results"]} == {"twin", "codeinstances", "novafabric"}


def test_each_distinct_planned_image_is_built_once(first_night: tuple[int, dict[str, Any], Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = first_night[2]
    rc, report = farm(capsys, "report", "--db", db)
    night = report["nights"][-1]
    judged = [r for r in report["last_night"]["results"] if r["verdict"] != "broken"]
    # the python one-liners of both JSON formats share one image; the NovaFabric capsule has its inputs in its own
    assert (night["images"], night["builds"]) == (2, 2)
    assert len({r["image_digest"] for r in judged}) == 2
    assert all(len(r["attempts"]) == 3 for r in judged)  # stable verdicts: K attempts, no more


def test_the_nights_html_and_junit_list_every_capsule(first_night: tuple[int, dict[str, Any], Path],
                                                      tmp_path: Path, chromium: str) -> None:
    """The reports of a real night: the JUnit validates against Surefire's XSD with one testcase
    per capsule, and the HTML page, loaded in a real headless Chromium, has a row for each."""
    from lxml import html as lxml_html

    from tests.services import browse
    from tests.support.reports import valid

    _, doc, db = first_night
    html_file, junit_file = tmp_path / "farm.html", tmp_path / "farm.xml"
    assert main(["farm", "report", "--db", str(db), "--html", str(html_file), "--junit", str(junit_file)]) == 0
    results = doc["result"]["results"]
    cases = valid(junit_file.read_text(encoding="utf-8")).findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(r["path"] for r in results)
    broken = next(c for c in cases if c.get("name", "").endswith("tampered"))
    assert broken.find("error") is not None
    dom = lxml_html.fromstring(browse(chromium, html_file, tmp_path, "--dump-dom").stdout)
    rows = {(el.get("data-capsule"), el.get("data-verdict")) for el in dom.xpath("//tr[@data-capsule]")}
    assert rows == {(r["path"], r["verdict"]) for r in results}


# -- --ref: fixed on a later commit, not on a commit that changes nothing relevant ----------

@pytest.fixture(scope="module")
def fix_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    path = tmp_path_factory.mktemp("fixrepo") / "repo"
    bad = git_repo(path, {"check.py": CHECK_BAD})
    (path / "README.md").write_text("nothing to do with the check\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "docs")
    unrelated = git(path, "rev-parse", "HEAD").strip()
    (path / "check.py").write_text(CHECK_GOOD)
    git(path, "commit", "-q", "-am", "fix the value")
    fixed = git(path, "rev-parse", "HEAD").strip()
    return path, bad, unrelated, fixed


def test_ref_fixed_on_the_fixing_commit_not_on_an_unrelated_one_and_since_last_night(
        fix_repo: tuple[Path, str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, bad, unrelated, fixed = fix_repo
    caps = tmp_path / "caps"
    py_twin(caps / "value.json", "", "Error: value is 41, expected 42\n", 1, repo=repo_fact(str(repo), bad),
            argv=["python3", "check.py"])
    db = tmp_path / "farm.sqlite"
    rc, first = farm(capsys, "run", caps, "--db", db, "--repo", repo, "--ref", unrelated, "--attempts", "2")
    [r] = first["results"]
    assert (rc, r["verdict"], r["ref"], r["ref_verdict"]) == (0, "reproduced", unrelated, "not-fixed")
    sides = Counter(a["side"] for a in r["attempts"])
    assert sides == {"recorded": 2, "ref": 1}  # not-fixed is decided at the first failing REF attempt

    write_instance(caps / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")  # new tonight
    rc, second = farm(capsys, "run", caps, "--db", db, "--repo", repo, "--ref", fixed, "--attempts", "2")
    results = by_name(second)
    assert (rc, results["value.json"]["verdict"], results["value.json"]["ref_verdict"]) == (0, "reproduced", "fixed")
    # 2/2 at the commit: fixed once 8 straight passes at REF put its rate below (2 passes would be luck)
    assert Counter(a["side"] for a in results["value.json"]["attempts"]) == {"recorded": 2, "ref": 8}
    assert results["hello.json"]["ref_verdict"] is None  # no commit recorded: nothing to judge at REF
    rc, report = farm(capsys, "report", "--db", db)
    changes = {(Path(t["path"]).name, t["kind"]) for t in report["since_last_night"]}
    assert changes == {("value.json", "fixed"), ("hello.json", "new")}
    assert main(["farm", "report", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "fixed: " in text and "value.json" in text and "new: " in text


# -- a flaky command ------------------------------------------------------------------------

def test_a_flaky_command_is_flaky_with_a_rate_and_only_it_gets_more_attempts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    caps = tmp_path / "caps"
    py_twin(caps / "coin.json", COIN, "Error: the coin came up tails\n", 1)
    py_twin(caps / "steady.json", TZ_CODE, "tz America/New_York\n", 3, tz="America/New_York")
    db = tmp_path / "farm.sqlite"
    # K=10: the first ten all agree for a fair coin once in 512 nights
    rc, night = farm(capsys, "run", caps, "--db", db, "--attempts", "10", "--max-attempts", "20")
    results = by_name(night)
    coin, steady = results["coin.json"], results["steady.json"]
    assert (rc, coin["verdict"], steady["verdict"]) == (0, "flaky", "reproduced")
    assert 10 <= len(coin["attempts"]) <= 20 and len(steady["attempts"]) == 10
    # more only while the first ten leave the rate undecided (the one stopping rule), as the coin fell
    from runner.farm.night_options import FarmOptions

    first = [a["classification"] for a in sorted(coin["attempts"], key=lambda a: a["index"])[:10]]
    sampling = FarmOptions(attempts=10, max_attempts=20).sampling
    assert (len(coin["attempts"]) > 10) == (sampling.series_batch(first) > 0)
    rate = coin["rate"]
    assert rate["runs"] == len(coin["attempts"]) and 0 < rate["failed"] < rate["runs"]
    assert 0.0 <= rate["low"] < rate["failed"] / rate["runs"] < rate["high"] <= 1.0
    # more until the rate is known to within ±25 points, or the night's budget ends
    assert rate["high"] - rate["low"] <= 0.5 or rate["runs"] == 20
    assert f"{rate['failed']} of {rate['runs']} attempts came back as recorded: fails in " in coin["reason"]
    assert {a["classification"] for a in coin["attempts"]} == {"recorded", "pass"}


# -- SIGKILL midway, then --resume ------------------------------------------------------------

def _cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "runner", "farm", *map(str, args)]


def _wait_for_attempts(db: Path, proc: subprocess.Popen[bytes], state: str, at_least: int, timeout_s: float) -> None:
    """Until the farm has recorded `at_least` attempts in `state` (polling the history it writes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the farm ended before it was stopped: {proc.stderr.read().decode()[-2000:]}"
        try:
            if db.exists() and sum(attempt_counts(db, state).values()) >= at_least:
                return
        except sqlite3.OperationalError:  # tables not created yet
            pass
        time.sleep(0.05)
    raise AssertionError(f"no {at_least} {state} attempt(s) within {timeout_s} s")


def test_sigkill_midway_then_resume_redoes_nothing_and_loses_nothing(
        tmp_path: Path, engine: Any, capsys: pytest.CaptureFixture[str]) -> None:
    caps = tmp_path / "caps"
    for i in range(4):
        write_instance(caps / f"echo-{i}.json", ["python3", "-c", f"print({i})"], f"{i}\n")
    py_twin(caps / "tz.json", TZ_CODE, "tz America/New_York\n", 3, tz="America/New_York")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed_db = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(_cli("run", caps, "--db", killed_db, "--jobs", "1"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_attempts(killed_db, proc, "finished", 5, timeout_s=600)  # one capsule judged, the next begun
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    before = attempt_counts(killed_db)
    with sqlite3.connect(killed_db) as conn:
        kept = set(conn.execute("SELECT id FROM attempts WHERE state = 'finished'").fetchall())
        judged_before = conn.execute("SELECT count(*) FROM results").fetchone()[0]
        night_id = conn.execute("SELECT id FROM nights").fetchone()[0]
    assert 1 <= judged_before < 5

    rc, resumed = farm(capsys, "run", "--resume", "--db", killed_db)
    straight_db = tmp_path / "straight.sqlite"
    rc2, straight = farm(capsys, "run", caps, "--db", straight_db, "--jobs", "1")
    assert rc == rc2 == 0
    assert resumed["night"]["id"] == night_id and resumed["night"]["finished_at"]
    verdicts = lambda night: sorted((Path(r["path"]).name, r["verdict"], len(r["attempts"]))  # noqa: E731
                                    for r in night["results"])
    assert verdicts(resumed) == verdicts(straight)  # five capsules, three attempts each, as uninterrupted
    after = attempt_counts(killed_db)
    assert after == attempt_counts(straight_db) and all(n == 3 for n in after.values())
    assert all(after[k] >= n for k, n in before.items())
    with sqlite3.connect(killed_db) as conn:
        assert kept <= set(conn.execute("SELECT id FROM attempts WHERE state = 'finished'").fetchall())
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 5
    assert sum(attempt_counts(killed_db, "started").values()) <= 1  # at most the one cut short by the kill
    assert not engine.client.containers.list(all=True, filters={"label": f"replay=farm-{night_id}"})


def test_sigterm_during_an_attempt_stops_at_once_leaves_nothing_and_resume_finishes(
        tmp_path: Path, engine: Any, capsys: pytest.CaptureFixture[str]) -> None:
    caps = tmp_path / "caps"
    write_instance(caps / "sleeper.json", ["python3", "-c", "import time; print('done'); time.sleep(20)"], "done\n")
    db = tmp_path / "farm.sqlite"
    proc = subprocess.Popen(_cli("run", caps, "--db", db, "--attempts", "1", "--max-attempts", "1"),
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_attempts(db, proc, "started", 1, timeout_s=600)
        with sqlite3.connect(db) as conn:
            night_id = conn.execute("SELECT id FROM nights").fetchone()[0]
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(60)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert rc == 130 and took < 15, (rc, took, proc.stderr.read().decode()[-1000:])
    assert not engine.client.containers.list(all=True, filters={"label": f"replay=farm-{night_id}"})
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 0  # no verdict from a cut-short attempt
        assert conn.execute("SELECT finished_at FROM nights").fetchone()[0] is None
    rc, night = farm(capsys, "run", "--resume", "--db", db)
    [r] = night["results"]
    assert (rc, r["verdict"], [a["index"] for a in r["attempts"]]) == (0, "reproduced", [2])


def test_an_infrastructure_failure_is_exit_3_and_never_stops_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.errors import SourceUnavailable
    from runner.replay.imageservice import ImageService

    caps = tmp_path / "caps"
    write_instance(caps / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    shutil.copytree(SEALED, caps / "sealed")
    real_image = ImageService._make  # what the image service's build-once cache calls to make an image

    def registry_down(self: ImageService, plan: Any) -> Any:  # fault injection: the package index answers 503
        if plan.inputs:
            raise SourceUnavailable("https://pypi.org/simple/six/: HTTP 503")
        return real_image(self, plan)

    db = tmp_path / "farm.sqlite"
    with monkeypatch.context() as mp:
        mp.setattr(ImageService, "_make", registry_down)
        rc, night = farm(capsys, "run", caps, "--db", db)
    results = by_name(night)
    assert (rc, results["hello.json"]["verdict"], results["sealed"]["verdict"]) == (3, "reproduced", "infra-error")
    assert "HTTP 503" in results["sealed"]["reason"] and results["sealed"]["attempts"] == []
    rc, night = farm(capsys, "run", caps, "--db", db)  # the next night: retried
    assert (rc, by_name(night)["sealed"]["verdict"]) == (0, "reproduced")
    rc, report = farm(capsys, "report", "--db", db)
    assert [(Path(t["path"]).name, t["kind"], t["before"]) for t in report["since_last_night"]] == [
        ("sealed", "newly-reproducing", "infra-error")]


# -- --trust-key / --require-valid, and the night's exit ---------------------------------------

def test_require_valid_makes_unsigned_capsules_broken_and_a_night_of_only_broken_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = NOVA / "dana-p256.pub.pem"
    caps = tmp_path / "caps"
    write_instance(caps / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    shutil.copytree(SEALED, caps / "sealed")
    rc, night = farm(capsys, "run", caps, "--db", tmp_path / "a.sqlite", "--trust-key", key, "--require-valid",
                     "--attempts", "1")
    results = by_name(night)
    assert (rc, results["sealed"]["verdict"], results["hello.json"]["verdict"]) == (0, "reproduced", "broken")
    assert "no valid signature from a trusted key" in results["hello.json"]["reason"]
    assert results["hello.json"]["attempts"] == []  # refused before anything was built or run
    only = tmp_path / "only"
    write_instance(only / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    rc, night = farm(capsys, "run", only, "--db", tmp_path / "b.sqlite", "--trust-key", key, "--require-valid")
    assert (rc, [r["verdict"] for r in night["results"]]) == (1, ["broken"])
    rc, report = farm(capsys, "report", "--db", tmp_path / "b.sqlite")
    assert report["rows"][0]["command"] == f"replay {only / 'hello.json'} --trust-key {key} --require-valid"


def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: connecting to it is refused at once
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_remote_that_cannot_be_reached_is_an_infra_error_never_a_broken_capsule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused connection (a real one, on this machine) and a DNS outage (fault injection: git's
    clone answers as it does when no name resolves) are the environment's: infra-error, retried
    next night, exit 3; a capsule whose remote is the capsule's own problem stays broken."""
    from runner.build.sources import repo

    caps = tmp_path / "caps"
    commit = "ab" * 20
    py_twin(caps / "refused.json", "print('x')", "x\n", 0,
            repo=repo_fact(f"https://127.0.0.1:{_closed_port()}/team/app.git", commit))
    py_twin(caps / "no-remote.json", "print('x')", "x\n", 0, repo=repo_fact("", commit) | {"remote": None})
    db = tmp_path / "farm.sqlite"
    rc, night = farm(capsys, "run", caps, "--db", db)
    results = by_name(night)
    assert (rc, results["refused.json"]["verdict"], results["no-remote.json"]["verdict"]) == (
        3, "infra-error", "broken"), results
    assert "no connection (pass --repo" in results["refused.json"]["reason"]
    assert "but no remote" in results["no-remote.json"]["reason"]

    real = repo._git

    def dns_down(args: list[str], cwd: Path | None = None, check: bool = True,
                 stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        if args[0] == "clone":
            return subprocess.CompletedProcess(args, 128, b"", b"fatal: unable to access 'https://127.0.0.1/': "
                                               b"Could not resolve host: git.example.com\n")
        return real(args, cwd, check, stdin)

    monkeypatch.setattr(repo, "_git", dns_down)
    rc, night = farm(capsys, "run", caps / "refused.json", "--db", db)
    [r] = night["results"]
    assert (rc, r["verdict"]) == (3, "infra-error") and "host not found" in r["reason"], r

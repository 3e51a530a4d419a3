"""`replay bisect --commits` on a capsule whose output tail was cut (issue 38): node's test
runner prints 40 failures, twin keeps the last 200 lines, so the capsule names only the last
ones. The change came in with a commit that failed 30 tests, every one cut from that tail: it
is the recorded failure (a lower bound), and the bisect names it.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runner.verdict import signature as sig
from tests.integration.bisecting import bisect_at, passed
from tests.integration.helpers import env_facts, git_history, repo_fact, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # a handful of node containers

TESTS = """\
const test = require('node:test');
const assert = require('node:assert');
const { fmt } = require('./fmt');

for (let i = 1; i <= %d; i++) {
  test(`formats case ${String(i).padStart(2, '0')}`, () => assert.strictEqual(fmt(i), `#${i}`));
}
"""
RIGHT, WRONG = "exports.fmt = (n) => `#${n}`;\n", "exports.fmt = (n) => `# ${n}`;\n"
# (file changes, subject): the change is the second commit; the third adds ten more (failing) tests
COMMITS = [({"fmt.js": RIGHT, "fmt.test.js": TESTS % 30}, "init"),
           ({"fmt.js": WRONG}, "fmt: a space after the hash"),
           ({"fmt.test.js": TESTS % 40}, "ten more cases"),
           ({"README": "fmt\n"}, "docs")]
ARGV = ["node", "--test", "--test-reporter=spec", "fmt.test.js"]


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("fmt") / "repo"
    return path, git_history(path, COMMITS)


def capsule(repo: Path, commit: str, exit_code: int) -> dict[str, Any]:
    data = twin_capsule(ARGV, "", exit_code, repo=repo_fact(str(repo), commit), env=env_facts(CI=None))
    data["command"]["failure"] = None  # recorded by record()
    data["runtimes"] = {"node": "22.23.3"}  # the example's: its image layers are cached
    return data


def record(data: dict[str, Any], repo: Path) -> dict[str, Any]:
    """The failure fields as twin records them: the last 200 lines of the real run here (the
    working tree is at the bad commit), their key lines and signature."""
    assert shutil.which("node"), "the host needs node (scripts/setup)"
    proc = subprocess.run(ARGV, cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout[-2000:]
    tail = sig.output_tail(proc.stdout + proc.stderr)
    assert "formats case 40" in tail and "formats case 01" not in tail  # cut
    fs = sig.compute(tail, 1)
    data["command"]["failure"] = {"signature": fs.signature, "keyLines": list(fs.key_lines), "outputTail": tail}
    return data


def test_a_cut_tail_capsule_bisects_commits_to_the_first_commit_of_the_change(
        engine: object, capsys: pytest.CaptureFixture[str], tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    bad = write_json(tmp_path / "bad.json", record(capsule(repo, shas[-1], 1), repo))
    good = write_json(tmp_path / "good.json", passed(capsule(repo, shas[0], 0)))
    rc, result = bisect_at(capsys, bad, good, repo, "--commits")
    assert (rc, result["walk"]["status"]) == (0, "found"), result["walk"]["trials"]
    assert result["first_failing"] == {"sha": shas[1], "subject": "fmt: a space after the hash"}
    assert any(n.startswith("the recorded failed tests come from a cut output tail") for n in result["walk"]["notes"])

"""`replay capture` leaks nothing planted (issue 39): a seeded corpus (tests/support/secret_corpus.py)
of 380 secrets in 37 formats, planted in 8 places (recorded environment values, argv, the output,
the diff's added and removed lines and lines split in two, untracked file names, the branch, the
remote and the working directory), captured by real `replay capture` runs, one process each: not
one secret, nor either half of a long one, is in a capsule or in capture's own closing lines.

No engine: capture runs here. Each run is a failing command in a repository of its own."""
from __future__ import annotations

import collections
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.helpers import git, git_repo
from tests.support.secret_corpus import PLACES, Corpus, Planted, Run, leaks

pytestmark = [pytest.mark.integration]

BASE = "# settings\nname = demo\n"


def _repo(path: Path, run: Run) -> None:
    git_repo(path, {"c.txt": BASE + "".join(f"{line}\n" for line in run.removed)})
    git(path, "checkout", "-q", "-b", run.branch)
    (path / "c.txt").write_text(BASE + "".join(f"{line}\n" for line in run.added))
    git(path, "remote", "add", "origin", run.remote)
    for name in run.untracked:
        (path / name).write_text("x\n")
    (path / run.cwd).mkdir(parents=True, exist_ok=True)


def _capture(tmp: Path, i: int, run: Run) -> tuple[bytes, str]:
    """One real `replay capture` of a failing command that prints the run's output lines; the
    capsule's bytes and capture's own closing lines (stderr after the command's output)."""
    repo, out, printed = tmp / f"repo{i}", tmp / f"c{i}.json", tmp / f"out{i}.txt"
    _repo(repo, run)
    printed.write_text("".join(f"{line}\n" for line in run.output) + "FAILED: planted\n")
    notes = {f"APP_NOTE_{k}": v for k, v in enumerate(run.env_values)}
    include = [w for name in notes for w in ("--include-env", name)]
    argv = ["sh", "-c", 'cat "$0" >&2; exit 1', str(printed), *run.argv]
    env = {**os.environ, **run.env_secrets, **notes, "REPLAY_CACHE": str(tmp / "cache")}
    proc = subprocess.run([sys.executable, "-m", "runner", "capture", *include, "-o", str(out), "--", *argv],
                          cwd=repo / run.cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and out.is_file(), proc.stderr[-2000:]
    closing = proc.stderr.split("FAILED: planted\n", 1)[-1]
    return out.read_bytes(), closing


def test_the_secret_corpus_leaks_nothing_from_real_captures(tmp_path: Path) -> None:
    runs = Corpus().runs()
    planted = [p for run in runs for p in run.planted]
    assert len(planted) >= 200 and len({p.format for p in planted}) >= 30 and set(PLACES) <= {p.place for p in planted}
    leaked: list[tuple[Planted, str]] = []
    for i, run in enumerate(runs):
        data, closing = _capture(tmp_path, i, run)
        doc = json.loads(data)
        assert doc["command"]["outcome"] == "fail" and "FAILED: planted" in doc["command"]["failure"]["outputTail"]
        assert len(doc["env"]) > 0 and all(f"APP_NOTE_{k}" in doc["redaction"]["valuesIncluded"]
                                           for k in range(len(run.env_values)))
        assert len(doc["repo"]["untracked"]) == len(run.untracked) and doc["repo"]["diff"]
        leaked += [(p, "capsule") for p in leaks(data, run.planted)]
        leaked += [(p, "closing lines") for p in leaks(closing.encode(), run.planted)]
    by_place = collections.Counter(p.place for p, _ in leaked)
    assert not leaked, (f"{len(leaked)} of {len(planted)} leaked ({dict(by_place)}): "
                        + "; ".join(f"{p.format} in {p.place} ({where})" for p, where in leaked[:20]))


def test_the_planted_places_are_where_capture_records_them(tmp_path: Path) -> None:
    """The corpus is not vacuous: what it plants reaches each place capture records (scrubbed)."""
    run = Corpus(runs=1, copies=1).runs()[0]
    data, _ = _capture(tmp_path, 0, run)
    doc = json.loads(data)
    repo = doc["repo"]
    assert repo["branch"].startswith("fix/") and repo["branch"] != run.branch
    assert repo["remote"] != run.remote and "example.com" in repo["remote"]
    assert doc["command"]["cwd"].startswith("work/") and doc["command"]["cwd"] != run.cwd
    assert "<redacted:" in repo["diff"] and "<redacted:" in doc["command"]["failure"]["outputTail"]
    assert any("<redacted:" in a for a in doc["command"]["argv"][4:])
    assert [f for f in doc["redaction"]["scrubbed"] if f in ("split-secret", "webhook-url", "netrc-password")]
    assert shlex.join(doc["command"]["argv"][:3]) == shlex.join(["sh", "-c", 'cat "$0" >&2; exit 1'])

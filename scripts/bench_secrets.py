"""Secret rows of scripts/bench.py (issue 39): what `replay capture` lets through, and what reading a
diff's lines joined (secrets split over two lines) costs.

  secret corpus recall   tests/support/secret_corpus.py's 380 secrets (37 formats, 8 places) through
                         18 real `replay capture` runs (the test's own runs:
                         tests/integration/test_capture_secrets.py): leaked of planted (target 0)
  split-line diff cost   scrubbing a 4 MB diff of a lockfile's and prose's lines as a diff (neighbouring
                         lines also read joined) against as plain text, interleaved in blocks, the
                         median ratio (target <= 2x)

Runs on its own too: `.venv/bin/python scripts/bench_secrets.py`.
"""
from __future__ import annotations

import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.capture.scrub import Scrubber  # noqa: E402
from tests.support.secret_corpus import Corpus, Run, leaks  # noqa: E402

Row = Callable[[str, str, str, bool | None], None]
BLOCKS = 5
TARGET = 2.0
_GIT = {"GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "B",
        "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **_GIT}, check=True, capture_output=True)


def _captured(tmp: Path, i: int, run: Run) -> bytes:
    """One real capture of a corpus run, as tests/integration/test_capture_secrets.py makes it."""
    repo = tmp / f"repo{i}"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "c.txt").write_text("# settings\n" + "".join(f"{line}\n" for line in run.removed))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    _git(repo, "checkout", "-q", "-b", run.branch)
    (repo / "c.txt").write_text("# settings\n" + "".join(f"{line}\n" for line in run.added))
    _git(repo, "remote", "add", "origin", run.remote)
    for name in run.untracked:
        (repo / name).write_text("x\n")
    (repo / run.cwd).mkdir(parents=True, exist_ok=True)
    printed, out = tmp / f"out{i}.txt", tmp / f"c{i}.json"
    printed.write_text("".join(f"{line}\n" for line in run.output))
    notes = {f"APP_NOTE_{k}": v for k, v in enumerate(run.env_values)}
    include = [w for name in notes for w in ("--include-env", name)]
    subprocess.run([sys.executable, "-m", "runner", "capture", "-q", *include, "-o", str(out), "--", "sh", "-c",
                    'cat "$0" >&2; exit 1', str(printed), *run.argv], cwd=repo / run.cwd,
                   env={**os.environ, **run.env_secrets, **notes, "PYTHONPATH": str(ROOT)}, capture_output=True,
                   timeout=300)
    return out.read_bytes()


def _lockfile_diff(lines: int = 60_000) -> bytes:
    r = random.Random(39)
    b64 = string.ascii_letters + string.digits + "+/"
    out = ["@@ -1 +1 @@"]
    for i in range(lines):
        k = r.random()
        if k < 0.3:
            out.append(f'+    "node_modules/pkg{i}": {{')
        elif k < 0.5:
            out.append(f'+      "resolved": "https://registry.npmjs.org/pkg{i}/-/pkg{i}-1.0.{i}.tgz",')
        elif k < 0.7:
            out.append('+      "integrity": "sha512-' + "".join(r.choice(b64) for _ in range(86)) + '==",')
        else:
            out.append("+the quick brown fox jumps over the lazy dog, and more words follow here")
    return ("\n".join(out) + "\n").encode()


def _ratio(data: bytes) -> float:
    ratios = []
    for _ in range(BLOCKS):
        start = time.perf_counter()
        Scrubber({}, None).data(data)
        plain = time.perf_counter() - start
        start = time.perf_counter()
        Scrubber({}, None).diff(data)
        ratios.append((time.perf_counter() - start) / plain)
    return statistics.median(ratios)


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    runs = Corpus().runs()
    planted = [p for r in runs for p in r.planted]
    leaked = sum(len(leaks(_captured(tmp, i, r), r.planted)) for i, r in enumerate(runs))
    formats = len({p.format for p in planted if not p.format.startswith("remote-")})  # a remote's forms reuse them
    places = len({p.place for p in planted})
    row("capture: secret corpus leaked", f"{leaked} of {len(planted)} ({formats} formats, {places} places)", "0",
        leaked == 0)
    data = _lockfile_diff()
    ratio = _ratio(data)
    row("capture: split-line diff scrub vs plain", f"{ratio:.2f}x on {len(data) / 1e6:.1f} MB", f"<= {TARGET:g}x",
        ratio <= TARGET)


if __name__ == "__main__":
    from benchrow import row as print_row  # type: ignore[import-not-found]

    with tempfile.TemporaryDirectory(prefix="bench-secrets-") as tmp:
        run(Path(tmp), {}, 0.0, print_row)

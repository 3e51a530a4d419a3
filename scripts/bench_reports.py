"""Report rows of scripts/bench.py (issue 11, part B):
  --patch cost        `replay --patch FIX` with a patch never seen before (so its image is
                      new) against one warm replay: it runs the unpatched attempts too and
                      rebuilds only the source layers (target <= 2.5x: twice the attempts
                      and a source-only build, never a full one)
  report length       lines of the bundled example's default report at 100 columns (<= 40)
Runs on its own too: `.venv/bin/python scripts/bench_reports.py`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPLAY = [sys.executable, "-m", "runner"]
CAPSULE = ROOT / "examples" / "tz-clock" / "capsule.json"
BUNDLE = ROOT / "examples" / "tz-clock" / "repo.bundle"
Row = Callable[[str, str, str, bool | None], None]


def fresh_patch(tmp: Path) -> Path:
    """A comment-only change with a unique marker: its source layer is in no cache."""
    clone = tmp / "bench-reports-clone"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
    dates = clone / "src" / "dates.js"
    dates.write_text(dates.read_text().replace("Bug:", f"Bug ({uuid.uuid4().hex}):"))
    out = tmp / "bench-reports.diff"
    out.write_text(subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=clone, capture_output=True, text=True,
                                  check=True).stdout)
    return out


def replay(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    start = time.monotonic()
    proc = subprocess.run([*REPLAY, str(CAPSULE), "--repo", str(BUNDLE), *args], env=env, capture_output=True,
                          text=True, timeout=1800)
    return time.monotonic() - start, proc


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """`warm_s` (bench.py's, of one attempt) is not the reference here: a warm replay as `--patch` runs it,
    with the default attempts, is measured (after one that makes sure its image is there)."""
    replay([], env)
    warm_s, _ = replay([], env)
    patched_s, proc = replay(["--patch", str(fresh_patch(tmp)), "--json"], env)
    try:
        image = json.loads(proc.stdout)["result"]["image"]
    except (ValueError, KeyError, TypeError):
        row("--patch vs one warm replay", f"failed: {proc.stderr.strip().splitlines()[-1:]}", "<= 2.5x", False)
        return
    ratio = patched_s / warm_s
    row("--patch (new patch) vs one warm replay",
        f"{patched_s:.1f}s vs {warm_s:.1f}s = {ratio:.2f}x, {image['steps_run']} build steps", "<= 2.5x",
        ratio <= 2.5)
    _, text = replay([], {**env, "COLUMNS": "100"})
    lines = len(text.stdout.splitlines())
    row("default report of the example, 100 columns", f"{lines} lines", "<= 40", lines <= 40)


if __name__ == "__main__":
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-reports-") as t:
        run(Path(t), dict(os.environ), float("nan"), row)

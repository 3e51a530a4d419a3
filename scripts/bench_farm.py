"""Farm rows of scripts/bench.py (issue 10): 20 capsules sharing 2 planned images.

Ten twin capsules of python one-liners that differ only in TZ and env (one image), and
ten variants of the bundled tz-clock capsule that differ only in TZ and env (a second,
Node image, its source from the bundle):
  image builds        images the first farm night built (fresh image repository) against
                      the distinct planned images (target: equal, 2)
  --jobs 1            farm wall time against the sum of the 20 single warm replays
                      (`replay CAPSULE`, 3 attempts each, as the farm does) (target <= 1.1x)
  --jobs 2            faster than --jobs 1
Also printed: capsules per hour. Runs on its own too: `.venv/bin/python scripts/bench_farm.py`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = [sys.executable, "-m", "runner"]  # this checkout's replay (PYTHONPATH below), as bench.py's venv has it
CAPSULE = ROOT / "examples" / "tz-clock" / "capsule.json"
BUNDLE = ROOT / "examples" / "tz-clock" / "repo.bundle"
ZONES = ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "Europe/Berlin",
         "Europe/Paris", "Asia/Tokyo", "Australia/Sydney", "UTC", "America/Sao_Paulo")
CODE = "import os, sys\nz = os.environ.get('TZ')\nprint('tz', z)\nsys.exit(0 if z == 'UTC' else 3)"

Row = Callable[[str, str, str, bool | None], None]


def capsules(folder: Path) -> list[Path]:
    """20 capsules, 2 planned images: each half differs only in run-time facts."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.unit.farm.builders import py_twin

    out = []
    for i, zone in enumerate(ZONES):
        out.append(py_twin(folder / "python" / f"tz-{i}.json", CODE, f"tz {zone}\n", 0 if zone == "UTC" else 3,
                           tz=zone, BENCH_INDEX=str(i)))
        data = json.loads(CAPSULE.read_text())
        data["env"]["TZ"] = {"state": "set", "value": zone}
        data["env"]["BENCH_INDEX"] = {"state": "set", "value": str(i)}
        node = folder / "node" / f"tz-clock-{i}.json"
        node.parent.mkdir(parents=True, exist_ok=True)
        node.write_text(json.dumps(data))
        out.append(node)
    return out


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any] | None, str]:
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    secs = time.monotonic() - start
    try:
        return secs, json.loads(proc.stdout), proc.stderr
    except ValueError:
        return secs, None, proc.stderr


def farm(folder: Path, db: Path, jobs: int, env: dict[str, str]) -> tuple[float, dict[str, Any] | None, str]:
    return timed([*REPLAY, "farm", "run", str(folder), "--db", str(db), "--repo", str(BUNDLE), "--jobs", str(jobs),
                  "--json"], env)


def singles(paths: list[Path], env: dict[str, str]) -> float | None:
    total = 0.0
    for path in paths:
        repo = ["--repo", str(BUNDLE)] if path.parent.name == "node" else []
        secs, report, err = timed([*REPLAY, str(path), *repo, "-n", "3", "--json"], env)
        if report is None:
            print(f"bench: replay {path.name} failed: {err.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        total += secs
    return total


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """`warm_s` (bench.py's one warm replay) is not needed here: the sum is measured."""
    env = {**env, "REPLAY_IMAGE_REPO": f"replay/benchfarm{int(time.time())}"}  # fresh: builds are countable
    folder = tmp / "farm-capsules"
    paths = capsules(folder)
    first_s, first, err = farm(folder, tmp / "farm-first.sqlite", 2, env)
    if first is None or first["result"] is None:
        row("farm: image builds vs planned images", f"farm failed: {err.strip().splitlines()[-1:]}", "equal", False)
        return
    night = first["result"]["night"]
    row("farm: image builds vs distinct planned images", f"{night['builds']} built, {night['images']} planned",
        "equal (2)", night["builds"] == night["images"] == 2)
    total = singles(paths, env)
    one_s, one, _ = farm(folder, tmp / "farm-j1.sqlite", 1, env)
    two_s, two, _ = farm(folder, tmp / "farm-j2.sqlite", 2, env)
    if total is None or one is None or two is None:
        row("farm --jobs 1 vs sum of single warm replays", "failed (see stderr)", "<= 1.1x", False)
    else:
        ratio = one_s / total
        row(f"farm --jobs 1 vs sum of {len(paths)} warm replays",
            f"{one_s:.1f}s vs {total:.1f}s = {ratio:.2f}x ({len(paths) / one_s * 3600:.0f}/h)", "<= 1.1x", ratio <= 1.1)
        row("farm --jobs 2 vs --jobs 1", f"{two_s:.1f}s vs {one_s:.1f}s ({len(paths) / two_s * 3600:.0f} capsules/h)",
            "faster", two_s < one_s)
    repo = env["REPLAY_IMAGE_REPO"]
    for ref in subprocess.run(["docker", "images", "-q", repo], capture_output=True, text=True).stdout.split():
        subprocess.run(["docker", "image", "rm", "-f", ref], capture_output=True)


if __name__ == "__main__":
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-farm-") as t:
        run(Path(t), dict(os.environ), float("nan"), row)

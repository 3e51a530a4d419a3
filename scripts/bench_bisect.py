"""Bisect rows of scripts/bench.py (issue 5), measured on the bundled example.

Two pairs, built by the integration tests' capsule builders (tests/integration/test_bisect.py):
  single culprit       TZ among six differences (four run-time, node and npm at build time):
                       trials against ddmin's bound for one culprit, 2*ceil(log2 N) + 2
  run-time only        the same pair with node and npm equal: every trial runs on the
                       good end's image, so no trial after it builds
  wall time            of the single-culprit bisect (its ends' image builds included) against
                       one warm replay: under `trials` warm replays in a row; and again with
                       those images cached
  against its replay   (issue 36) the single-culprit bisect, both ends' images built, against one
                       warm replay of its bad capsule as a user runs it (`replay BAD`: its default
                       attempts, 3 for a failure that comes back every time): <= 2x
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = str(ROOT / ".venv" / "bin" / "replay")
BUNDLE = ROOT / "examples" / "tz-clock" / "repo.bundle"

Row = Callable[[str, str, str, bool | None], None]


def bisect(bad: Path, good: Path, env: dict[str, str]) -> tuple[float, dict[str, Any] | None]:
    """`replay bisect BAD --good GOOD --json` as a user runs it: seconds, and the result
    (None when it printed none: the error is on stderr, shown by the caller)."""
    start = time.monotonic()
    proc = subprocess.run([REPLAY, "bisect", str(bad), "--good", str(good), "--repo", str(BUNDLE), "--json"], env=env,
                          capture_output=True, text=True, timeout=1800)
    secs = time.monotonic() - start
    try:
        return secs, json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        print(f"bench: bisect failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return secs, None


def warm_replay(capsule: Path, env: dict[str, str]) -> float:
    """`replay CAPSULE` as a user runs it (default attempts), its image built: the median of three."""
    walls = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([REPLAY, str(capsule), "--repo", str(BUNDLE)], env=env, capture_output=True, timeout=1800)
        walls.append(time.monotonic() - start)
    return sorted(walls)[1]


def trial_bound(facts: int) -> int:
    return 2 * math.ceil(math.log2(facts)) + 2 if facts > 1 else 2


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.integration.bisecting import tz_pair

    pair = tz_pair(tmp / "bisect-single")
    cold_s, single = bisect(*pair, env)  # builds both ends' images
    secs, again = bisect(*pair, env)  # those images cached: what a trial costs, not an image build
    single = again if again is not None else single
    if single is None:
        row("bisect, single culprit: trials", "failed (see stderr)", "<= 2*ceil(log2 N)+2", False)
    else:
        n, t = len(single["candidates"]), len(single["trials"])
        found = single["minimal"] == ["env:TZ"]
        row("bisect, single culprit: trials",
            f"{t} trials for {n} facts (bound {trial_bound(n)})" + ("" if found else ", TZ not found"),
            "<= 2*ceil(log2 N)+2", found and t <= trial_bound(n))

    _, runtime_only = bisect(*tz_pair(tmp / "bisect-run-time", build_facts=False), env)
    if runtime_only is None:
        row("bisect, run-time-only differences: builds", "failed (see stderr)", "0", False)
    else:
        # the good end's image is the one image the pair needs (it may be built, or cached)
        built = sum(1 for trial in runtime_only["trials"] if trial["built"] and trial["role"] != "good end")
        found = runtime_only["minimal"] == ["env:TZ"]
        row("bisect, run-time-only differences: builds",
            f"{built} in {len(runtime_only['trials']) - 1} trials after the good end" + ("" if found else ", TZ not found"),
            "0", found and built == 0)

    if single is not None:
        t = len(single["trials"])
        row("bisect wall time vs one warm replay", f"{cold_s:.1f} s vs {warm_s:.1f} s ({t} trials, ends built)",
            f"< {t} x warm replay", cold_s < t * warm_s)
        row("  the same, end images cached", f"{secs:.1f} s vs {warm_s:.1f} s", f"< {t} x warm replay",
            secs < t * warm_s)
        own = warm_replay(pair[0], env)
        runs = sum(len(trial["attempts"]) for trial in single["trials"])
        row("Node facts bisect, ends built, vs its warm replay", f"{secs:.1f} s vs `replay BAD` {own:.1f} s = "
            f"{secs / own:.2f}x ({runs} runs against its 3)", "<= 2x", secs <= 2 * own)

"""Noise-aware answers (issue 27), rows of scripts/bench.py: counts over random trials, which
belong here and not in a test that could fail by chance.

The counts drive replay's own stopping rule and judgements (runner/replay/decide.py, the code
`replay CAPSULE` runs) with a seeded random stand-in for the containers:
  placebo patch        a failure that comes back with probability 0.5, a patch that changes
                       nothing, 20 fix checks: FIXED at most once at the default confidence
                       (0.95), never at --confidence 0.99; the runs they spent
  real fix             the same failure, a patch that removes it: how often FIXED (power)
  deterministic        a failure that comes back every time: the runs a replay costs (3, as
                       before this issue) and a fix check (3 + 5: three passes after three
                       failures no longer count as a fix)
  one real container   a fix check with a placebo patch of a container that draws its own
                       outcome (python's random, 0.5): its verdict, runs and time
Runs on its own too: `.venv/bin/python scripts/bench_noise.py [--no-container]`.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = [sys.executable, "-m", "runner"]
TRIALS = 20
SEED = 27

Row = Callable[[str, str, str, bool | None], None]

COIN = """\
import random, sys
if random.random() < 0.5:
    print('FAIL: the coin came up tails')
    sys.exit(1)
print('heads')
"""


def stand_in(rng: random.Random, p_fail: float) -> Any:
    """A series of attempts whose outcomes are seeded draws: fails as recorded with p_fail."""
    from runner.verdict.judge import Attempt

    def run(until: Any, side: str) -> list[Attempt]:
        out: list[Attempt] = []
        while until(out, float(len(out))) is not None:
            failed = rng.random() < p_fail
            out.append(Attempt(1 if failed else 0, None, "exit1:aaaa" if failed else "exit0:bbbb", (), 1.0,
                               classification="recorded" if failed else "pass"))
        return out
    return run


def fix_checks(p_before: float, p_after: float, confidence: float = 0.95, trials: int = TRIALS,
               seed: int = SEED) -> tuple[dict[str, int], list[tuple[int, int]]]:
    """`trials` fix checks: the verdicts counted, and each one's (baseline runs, patched runs)."""
    from runner.replay import ReplayOptions
    from runner.replay.decide import fix_checked
    from runner.verdict.judge import Expected

    expected = Expected(True, 1, None, "exit1:aaaa", ("FAIL",))
    sampling = ReplayOptions(confidence=confidence).sampling
    rng = random.Random(seed)
    verdicts: dict[str, int] = {}
    runs: list[tuple[int, int]] = []
    for _ in range(trials):
        outcome = fix_checked(expected, sampling, stand_in(rng, p_before), stand_in(rng, p_after))
        verdicts[outcome.verdict] = verdicts.get(outcome.verdict, 0) + 1
        runs.append((len(outcome.baseline.attempts) if outcome.baseline else 0, len(outcome.attempts)))
    return verdicts, runs


def _spent(runs: Sequence[tuple[int, int]]) -> str:
    before = sum(b for b, _ in runs) / len(runs)
    after = sum(a for _, a in runs) / len(runs)
    return f"runs {before:.1f} + {after:.1f} on average"


def counts(row: Row) -> None:
    from runner.replay import ReplayOptions
    from runner.replay.decide import fix_checked, replayed
    from runner.verdict.judge import Expected

    for confidence, most in ((0.95, 1), (0.99, 0)):
        verdicts, runs = fix_checks(0.5, 0.5, confidence)
        fixed = verdicts.get("fixed", 0)
        said = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
        row(f"noise: placebo on a 0.5 failure ({confidence})", f"FIXED {fixed}/{TRIALS} ({said}); {_spent(runs)}",
            f"<= {most}/{TRIALS}", fixed <= most)
    verdicts, runs = fix_checks(0.5, 0.0)
    row("noise: real fix of a 0.5 failure (0.95)", f"FIXED {verdicts.get('fixed', 0)}/{TRIALS}; {_spent(runs)}",
        "", None)
    expected = Expected(True, 1, None, "exit1:aaaa", ("FAIL",))
    sampling = ReplayOptions().sampling
    replay_runs = len(replayed(expected, sampling, stand_in(random.Random(SEED), 1.0)).attempts)
    row("noise: deterministic failure, replay runs", f"{replay_runs} (before: 3)", "3 (as before)", replay_runs == 3)
    fix = fix_checked(expected, sampling, stand_in(random.Random(SEED), 1.0), stand_in(random.Random(SEED), 0.0))
    base = len(fix.baseline.attempts) if fix.baseline else 0
    row("noise: deterministic failure, fix check runs",
        f"{base} + {len(fix.attempts)} = {base + len(fix.attempts)} ({fix.verdict}; before: 3 + 3)", "", None)


def coin_capsule(folder: Path) -> tuple[Path, Path, str]:
    """A twin capsule of a python script that fails half the time by its own draw, its repo, and
    a placebo patch (a comment)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.integration.helpers import git, git_repo, repo_fact, twin_capsule, write_json

    repo = folder / "coin-repo"
    commit = git_repo(repo, {"coin.py": COIN})
    capsule = write_json(folder / "coin.json", twin_capsule(
        ["python3", "coin.py"], "FAIL: the coin came up tails\n", 1, python="3.11.2", repo=repo_fact(str(repo), commit)))
    (repo / "coin.py").write_text(COIN + "# changes nothing\n")
    placebo = git(repo, "diff", "HEAD")
    git(repo, "checkout", "-q", "--", "coin.py")
    return capsule, repo, placebo


def container(tmp: Path, env: dict[str, str], row: Row) -> None:
    capsule, repo, placebo = coin_capsule(tmp)
    patch = tmp / "placebo.patch"
    patch.write_text(placebo)
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    start = time.monotonic()
    proc = subprocess.run([*REPLAY, str(capsule), "--repo", str(repo), "--patch", str(patch), "--json"], env=env,
                          capture_output=True, text=True, timeout=3600)
    secs = time.monotonic() - start
    try:
        result = json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        row("noise: placebo, one real container", f"failed: {proc.stderr.strip().splitlines()[-1:]}", "not FIXED", False)
        return
    base = result["baseline"]
    row("noise: placebo, one real container (coin 0.5)",
        f"{result['verdict']}: {len(base['attempts'])} + {len(result['attempts'])} runs in {secs:.0f}s "
        f"(unpatched {base['rate']['failed']}/{base['rate']['runs']})", "not FIXED", result["verdict"] != "fixed")


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row, real: bool = True) -> None:
    """`warm_s` (bench.py's one warm replay) is not needed here."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    counts(row)
    if real:
        container(tmp, env, row)


if __name__ == "__main__":
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-noise-") as t:
        run(Path(t), dict(os.environ), float("nan"), row, real="--no-container" not in sys.argv)

"""`replay pin` rows of scripts/bench.py (issue 37): what a pin saves a bisect, and what a pin costs.

  pinned bisect  a 64-commit history whose failure comes back half the time, unless the run is
                 under the pin (GOMAXPROCS=8), where it fails every time. The real bisect code runs
                 (bisect_commits, its walk, trials, evidence, posterior) on plans the pin was applied
                 to (build/seeding.py, as `replay bisect` applies a pinned capsule's pin to every
                 plan); only the runs are a seeded stand-in (the unit tests' fake replayer). 20
                 bisects: right 20 of 20, and runs within 10 % of a deterministic failure's on the
                 same histories (and the unpinned 0.5 bisect's runs beside them)
  pin cost       real containers: `replay pin` on each suite of tests/cases/pin/ (a Hypothesis
                 health check, a pytest-randomly, a `go test -shuffle` and a jest --randomize order
                 dependency, a race that needs more Ps, a coin flip no setting moves): pinned or not,
                 runs, wall time

Runs on its own too: `.venv/bin/python scripts/bench_pin.py [--bisects N] [--real]`.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

Row = Callable[[str, str, str, bool | None], None]
COMMITS = 64
BISECTS = 20
PIN = {"GOMAXPROCS": "8"}


def commits_bisect(seed: int, rate: float, pin: dict[str, str]) -> tuple[bool, bool, int]:
    """One --commits bisect: (exit 0, right, runs). A bad commit's run fails every time under the pin,
    else with the rate's probability."""
    from runner.bisect.commits import bisect_commits
    from runner.bisect.trial import BisectSettings
    from runner.build.seeding import pinned
    from tests.unit.bisect.fakes import FakeProgress, FakeReplayer, commit_of, plan

    rng = random.Random(seed)
    line = [f"{i:040x}" for i in range(1, COMMITS + 1)]
    good = "0" * 40
    culprit = rng.randrange(COMMITS)
    order = {sha: i for i, sha in enumerate(line)}

    def under_pin(p: Any) -> bool:
        return all(p.env.get(k) is not None and p.env[k].value == v for k, v in PIN.items())

    def outcome(p: Any) -> Any:
        sha = commit_of(p)
        bad = sha != good and order[sha] >= culprit
        return "recorded" if bad and (under_pin(p) or rng.random() < rate) else "pass"

    ends = [plan(commit=c) for c in (good, line[-1])]
    if pin:
        ends = [pinned(p, pin, "bench")[0] for p in ends]
    fake = FakeReplayer(ends[0], ends[1], outcome)
    result = bisect_commits(fake, fake, Path("bad.json"), Path("good.json"), BisectSettings(None, 1, False, 0.95),
                            FakeProgress(), lambda source, g: [(sha, "s") for sha in line])
    return result.found, result.walk.first_failing == line[culprit], len(fake.ran)


def measure(rate: float, pin: dict[str, str], bisects: int) -> tuple[int, int, float]:
    """(right, wrong with exit 0, mean runs) over `bisects` seeded histories."""
    right = wrong = runs = 0
    for seed in range(bisects):
        found, ok, n = commits_bisect(seed * 7919 + 37, rate, pin)
        right += found and ok
        wrong += found and not ok
        runs += n
    return right, wrong, runs / bisects


def rows(row: Row, bisects: int = BISECTS) -> None:
    right, wrong, runs = measure(0.5, PIN, bisects)
    _, _, deterministic = measure(1.0, {}, bisects)
    _, _, unpinned = measure(0.5, {}, bisects)
    row("pinned 0.5 failure, --commits bisect", f"right {right}/{bisects}, wrong exit 0 {wrong}",
        f"right {bisects}/{bisects}", right == bisects)
    row("  its cost vs a deterministic failure", f"{runs:.2f} runs vs {deterministic:.2f} "
        f"({(runs / deterministic - 1) * 100:+.0f} %; unpinned {unpinned:.1f})", "within 10 %",
        abs(runs / deterministic - 1) <= 0.10)


def real_rows(tmp: Path, row: Row) -> None:
    """`replay pin` on each suite, its capsules recorded first (tests/integration/pinning.py)."""
    import contextlib
    import io
    import json

    from runner.cli.main import main
    from tests.integration.pinning import record_jest, record_suites

    caps = {**record_suites(tmp), "jest": record_jest(tmp)}
    for name, path in caps.items():
        repo = json.loads(path.read_text())["repo"]["remote"]
        start = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = main(["pin", str(path), "--repo", repo, "--json"])
        wall = time.monotonic() - start
        result = json.loads(out.getvalue())["result"]
        shown = " ".join(f"{k}={v[:12]}" for k, v in result["settings"].items()) if result["pinned"] else "not pinned"
        row(f"pin cost: {name}", f"{shown}; {result['runs']} runs, {wall:.0f} s",
            "pinned" if name != "coin" else "not pinned", (rc == 0) == (name != "coin"))


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """scripts/bench.py's entry: the stand-in rows, then `replay pin` on real containers."""
    rows(row)
    real_rows(tmp, row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bisects", type=int, default=BISECTS, help="bisects per row (default 20)")
    parser.add_argument("--real", action="store_true", help="also `replay pin` on the real suites (minutes)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))
    from benchrow import row

    rows(row, args.bisects)
    if args.real:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="replay-bench-pin-") as tmp:
            real_rows(Path(tmp), row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

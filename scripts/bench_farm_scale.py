"""Farm scale rows of scripts/bench.py (issue 22): the farm's own work, and a night of real containers.

10,000 capsules x 30 nights, the container run left out: 10,000 twin capsules (python
one-liners sharing one planned image) are written; 29 nights go into the history through
the store's API (`add_results`), the 30th through `run_night` (what `farm run` calls) with
an executor that answers at once. Then, against that history:
  collect+verify+plan   per capsule, in the 30th night                      (target <= 20 ms)
  farm report           `replay farm report` wall time and peak memory      (<= 5 s, <= 500 MB)
  summary page          `farm report --html`: the summary page's size       (<= 5 MB)
  farm history          `replay farm history PATH` of one capsule, wall     (<= 0.5 s)
  query plans           every read the store makes uses an index (EXPLAIN QUERY PLAN)
And a night of 1,000 cheap capsules with real containers (a few shared images), `farm run
--jobs 2 --attempts 1` against the floor of 1,000 bare `docker run`s of the same images,
two at a time (target <= 1.3x). The machine's load is printed beside each figure: the
targets are absolute, so a loaded machine shows in the figures.

Runs on its own too: `.venv/bin/python scripts/bench_farm_scale.py [--capsules N] [--nights N] [--real N]`.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = [sys.executable, "-m", "runner"]
CODE = "import sys\nprint('Error: value is 41, expected 42')\nsys.exit(1)"
Row = Callable[[str, str, str, bool | None], None]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def _setup_path() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def write_capsules(folder: Path, count: int, images: int = 1) -> list[Path]:
    """`count` failing twin capsules; `images` > 1 varies a build-time fact (the Debian release)
    so that a few planned images are shared by the capsules."""
    _setup_path()
    from tests.unit.farm.builders import py_twin

    out = []
    for i in range(count):
        extra = {"BENCH_INDEX": str(i)}
        path = py_twin(folder / f"{i // 1000:02d}" / f"cap-{i:05d}.json", CODE + f"  # {i}",
                       "Error: value is 41, expected 42\n", 1, **extra)
        if images > 1:
            _with_distro(path, i % images)
        out.append(path)
    return out


DISTROS = (("12", "2.36", "3.11.2"), ("13", "2.41", "3.13.5"))  # Debian 12 and 13: a base image each


def _with_distro(path: Path, group: int) -> None:
    import json

    doc = json.loads(path.read_text())
    version, libc, python = DISTROS[group % len(DISTROS)]
    doc["os"].update(distroVersion=version, libcVersion=libc)
    doc["runtimes"] = {"python": python}
    path.write_text(json.dumps(doc))


class InstantExecutor:
    """Answers every attempt at once, as recorded: the farm's own work with no container."""

    batch = 0
    resumable = False
    together = False

    def __init__(self) -> None:
        self._plans: set[str] = set()
        self._lock = threading.Lock()

    def prebuild(self, plans: Sequence[Any]) -> None:
        from runner.build.images import image_key

        with self._lock:
            self._plans.update(image_key(p) for p in plans)

    def ready(self, plan: Any) -> None:
        pass

    def run(self, work: Any, resumed: bool = False) -> Any:
        from runner.farm.executor import Done
        from runner.verdict.judge import Attempt

        att = Attempt(1, None, work.expected.signature or "", work.expected.key_lines, 0.01,
                      classification="recorded")
        return Done(tuple((aid, att) for aid in work.attempt_ids), "sha256:" + "0" * 64)

    def images(self) -> int:
        return len(self._plans)

    def builds(self) -> int:
        return 0

    def clear_leftovers(self) -> None:
        pass

    def interrupt(self) -> None:
        pass

    def close(self) -> None:
        pass


def fill_history(store: Any, paths: list[Path], nights: int, seed: int = 22) -> None:
    """`nights` finished nights through the store's API: most capsules steady, a few flaky,
    a few changing each night (as a farm of this size would see)."""
    from runner.farm.ids import content_id
    from runner.farm.records import AttemptRecord, CapsuleResult, Night, Rate
    from runner.farm.store import NightEntry

    from runner.capsules import read_capsule
    from runner.verdict.judge import expected_of

    rnd = random.Random(seed)
    ids = [content_id(p) for p in paths]
    sig = expected_of(read_capsule(paths[0])).signature  # the capsules' own (they fail alike): steady tonight too
    entries = [NightEntry(cid, str(p), "twin") for cid, p in zip(ids, paths)]
    flaky = set(rnd.sample(range(len(paths)), len(paths) // 50))
    state = ["reproduced"] * len(paths)
    for n in range(nights):
        nid = f"2026{(n // 28) + 10:02d}{(n % 28) + 1:02d}T020000Z-bench{n:02d}"
        start = f"2026-{(n // 28) + 10:02d}-{(n % 28) + 1:02d}T02:00:00.000Z"
        store.create_night(Night(nid, start), {"attempts": 3, "jobs": 2}, entries)
        results = []
        for i, (cid, p) in enumerate(zip(ids, paths)):
            if rnd.random() < 0.005:
                state[i] = rnd.choice(("not-reproduced", "reproduced", "different-failure", "broken"))
            verdict = "flaky" if i in flaky and rnd.random() < 0.6 else state[i]
            k = {"reproduced": 3, "flaky": 1, "different-failure": 0, "not-reproduced": 0}.get(verdict)
            atts: tuple[AttemptRecord, ...] = ()
            rate: Rate | None = None
            if k is not None:
                rate = Rate.of(k, 3)
                atts = tuple(AttemptRecord(f"{nid}-{i}-{j}", nid, cid, "recorded", j, "finished", start, start, 1, None,
                                           sig, "recorded" if j <= k else "pass", 0.2)
                             for j in range(1, 4))
            results.append(CapsuleResult(nid, cid, str(p), "twin", None, None, verdict,  # type: ignore[arg-type]
                                         signature=sig, rate=rate, attempts=atts,
                                         reason="" if verdict != "broken" else "does not verify (bench)",
                                         replay_version="bench", finished_at=start, duration_s=0.6))
        store.add_results(results)
        store.finish_night(nid, start, 1, 0)


def timed_child(cmd: list[str], env: dict[str, str]) -> tuple[float, int, subprocess.CompletedProcess[str] | None, str]:
    """Wall seconds, peak RSS in MB (the child's own, from wait4), and its output."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    secs = time.monotonic() - start
    import resource

    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024  # the largest child so far, in MB
    return secs, peak, subprocess.CompletedProcess(cmd, proc.returncode, out, err), err


def scale(tmp: Path, env: dict[str, str], row: Row, capsules: int = 10_000, nights: int = 30) -> None:
    _setup_path()
    from runner.farm.night import run_night
    from runner.farm.night_options import FarmOptions
    from runner.farm.night_progress import FarmProgress
    from runner.farm.store import SqlStore

    folder = tmp / "scale-capsules"
    paths = write_capsules(folder, capsules)
    db = tmp / "scale.sqlite"
    store = SqlStore(db)
    t = time.monotonic()
    fill_history(store, paths, nights - 1)
    print(f"  ({nights - 1} nights x {capsules} capsules written through the store in {time.monotonic() - t:.0f} s)",
          flush=True)

    class Timing(FarmProgress):
        def start(self, total: int, already: int) -> None:
            self.t_start = time.monotonic()

        def planned_images(self, images: int) -> None:
            self.t_planned = time.monotonic()

    progress = Timing(None)
    t0 = time.monotonic()
    run_night(store, [folder], FarmOptions(jobs=2), progress, make_executor=lambda *_: InstantExecutor())
    total = time.monotonic() - t0
    per = (progress.t_planned - t0) / capsules * 1000
    row("farm scale: collect+verify+plan per capsule",
        f"{per:.1f} ms ({capsules} capsules; whole night {total:.0f} s; {load()})", "<= 20 ms", per <= 20)

    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
           "COLUMNS": "200"}
    secs, peak, proc, err = timed_child([*REPLAY, "farm", "report", "--db", str(db)], env)
    ok = proc is not None and proc.returncode == 0
    row("farm scale: farm report (text)", f"{secs:.2f} s, peak {peak} MB ({capsules}x{nights}; {load()})",
        "<= 5 s, <= 500 MB", ok and secs <= 5 and peak <= 500)
    html = tmp / "scale-report" / "farm.html"
    html.parent.mkdir()
    secs, peak, proc, err = timed_child([*REPLAY, "farm", "report", "--db", str(db), "--html", str(html)], env)
    ok = proc is not None and proc.returncode == 0 and html.is_file()
    size = html.stat().st_size / 2**20 if html.is_file() else float("nan")
    pages = len(list((html.parent / "farm-pages").glob("*.html"))) if ok else 0
    row("farm scale: farm report --html", f"{secs:.2f} s, peak {peak} MB, {pages} other pages ({load()})",
        "<= 5 s, <= 500 MB", ok and secs <= 5 and peak <= 500)
    row("farm scale: summary page size", f"{size:.2f} MB", "<= 5 MB", ok and size <= 5)
    one = paths[capsules // 2]
    copy = tmp / "copied-capsule.json"  # the same capsule elsewhere: found by its content
    copy.write_bytes(one.read_bytes())
    from runner.farm.ids import content_id

    ways = {"path": (str(one), "matched the path"), "content": (str(copy), "matched the content"),
            "id prefix": (content_id(one)[:12], "matched the id prefix")}
    times = {}
    ok = True
    for way, (given, said) in ways.items():
        secs, _, proc, err = timed_child([*REPLAY, "farm", "history", given, "--db", str(db)], env)
        times[way] = secs
        ok = ok and proc is not None and proc.returncode == 0 and said in proc.stdout
    start, _, _, _ = timed_child([*REPLAY, "version"], env)  # the CLI's own start: the floor
    row("farm scale: farm history of one capsule",
        ", ".join(f"by {way} {secs:.2f} s" for way, secs in times.items())
        + f", {nights} nights (`replay version` alone: {start:.2f} s; {load()})", "<= 0.5 s each",
        ok and max(times.values()) <= 0.5)
    plans = store.query_plans()
    bad = {k: v for k, v in plans.items() if "USING" not in v}
    row("farm scale: store reads using an index", f"{len(plans) - len(bad)}/{len(plans)}"
        + (f" (scans: {', '.join(bad)})" if bad else ""), "all", not bad)
    if err and not ok:
        print(f"  last stderr: {err.strip().splitlines()[-1:]}", flush=True)


def real(tmp: Path, env: dict[str, str], row: Row, count: int = 1000, jobs: int = 2, images: int = 2) -> None:
    """`count` cheap capsules, `images` planned images: the farm against the bare docker runs."""
    import json

    folder = tmp / "real-capsules"
    write_capsules(folder, count, images)
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    # the images first (not what is timed): a night over one capsule of each
    warm = tmp / "real-warm"
    for i, p in enumerate(sorted(folder.rglob("*.json"))[:images]):
        (warm / f"{i}.json").parent.mkdir(parents=True, exist_ok=True)
        (warm / f"{i}.json").write_text(p.read_text())
    cmd = [*REPLAY, "farm", "run", "--attempts", "1", "--max-attempts", "1", "--jobs", str(jobs), "--json", "-q"]
    proc = subprocess.run([*cmd, str(warm), "--db", str(tmp / "real-warm.sqlite")], env=env, capture_output=True,
                          text=True, timeout=3600)
    try:
        doc = json.loads(proc.stdout)
        refs = sorted({r["image_digest"] for r in doc["result"]["results"] if r["image_digest"]})
    except (ValueError, KeyError, TypeError):
        row("farm: 1,000 real capsules vs bare docker run", f"warm-up failed: {proc.stderr.strip()[-200:]}",
            "<= 1.3x", False)
        return
    start = time.monotonic()
    proc = subprocess.run([*cmd, str(folder), "--db", str(tmp / "real.sqlite")], env=env, capture_output=True,
                          text=True, timeout=7200)
    farm_s = time.monotonic() - start
    ok = proc.returncode == 0
    argvs = [json.loads(p.read_text())["command"]["argv"] for p in sorted(folder.rglob("*.json"))]

    def bare(i: int) -> None:
        subprocess.run(["docker", "run", "--rm", "--network", "none", "--label", "replay=bench-floor",
                        refs[i % len(refs)], *argvs[i]], capture_output=True, timeout=600)

    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(bare, range(count)))
    floor_s = time.monotonic() - start
    ratio = farm_s / floor_s
    row(f"farm: {count} real capsules vs bare docker run", f"{farm_s:.0f} s vs {floor_s:.0f} s = {ratio:.2f}x "
        f"(--jobs {jobs}, {len(refs)} images; {load()})", "<= 1.3x", ok and ratio <= 1.3)


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """bench.py's hook; `warm_s` is not needed (the targets are absolute)."""
    scale(tmp, env, row)
    env = {**env, "REPLAY_IMAGE_REPO": f"replay/benchscale{int(time.time())}"}
    try:
        real(tmp, env, row)
    finally:
        repo = env["REPLAY_IMAGE_REPO"]
        for ref in subprocess.run(["docker", "images", "-q", repo], capture_output=True, text=True).stdout.split():
            subprocess.run(["docker", "image", "rm", "-f", ref], capture_output=True)


if __name__ == "__main__":
    from benchrow import row

    ap = argparse.ArgumentParser()
    ap.add_argument("--capsules", type=int, default=10_000)
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--real", type=int, default=1000, help="capsules of the real-container row (0: skip it)")
    ap.add_argument("--scale", type=int, default=1, help="0: skip the scale rows")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-bench-scale-") as t:
        if a.scale:
            scale(Path(t), dict(os.environ), row, a.capsules, a.nights)
        if a.real:
            e = {**os.environ, "REPLAY_IMAGE_REPO": f"replay/benchscale{int(time.time())}"}
            try:
                real(Path(t), e, row, a.real)
            finally:
                for ref in subprocess.run(["docker", "images", "-q", e["REPLAY_IMAGE_REPO"]], capture_output=True,
                                          text=True).stdout.split():
                    subprocess.run(["docker", "image", "rm", "-f", ref], capture_output=True)

"""Go bisect rows of scripts/bench.py (issue 21): the test-tool cache trials share, on and off.

A Go module whose test fails on Go 1.23 (runtime:go, a build-time fact) recorded failing on
1.23.9 and passing on 1.22.10, with two decoys (CI and APP_MODE, run-time). Both ends' images are
built by a first bisect; the rows measure the next ones against one warm replay of the failing
capsule as a user runs it (`replay BAD`: its default attempts, 3 for a failure that comes back every
time; one attempt's `-n 1` shown beside it):
  cache on     trials after the ends share GOCACHE per image (filled by the ends, test results
               never reused: GOFLAGS=-count=1): <= 3x one warm replay
  cache off    --no-cache-reuse: every trial compiles from an empty cache (reported, no target)
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPLAY = str(ROOT / ".venv" / "bin" / "replay")
Row = Callable[[str, str, str, bool | None], None]
BAD_GO, GOOD_GO = "1.23.9", "1.22.10"
GO_MOD = "module example.com/toolchain\n\ngo 1.22\n"
TOOLCHAIN_TEST = """\
package toolchain

import (
	"runtime"
	"strings"
	"testing"
)

func TestToolchain(t *testing.T) {
	if strings.HasPrefix(runtime.Version(), "go1.23") {
		t.Fatalf("error: %s rounds the other way", runtime.Version())
	}
}
"""


def timed(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any] | None]:
    start = time.monotonic()
    proc = subprocess.run([REPLAY, *args, "--json"], env=env, capture_output=True, text=True, timeout=1800)
    secs = time.monotonic() - start
    try:
        return secs, json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        print(f"bench: {args[0]} failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return secs, None


def go_pair(dest: Path) -> tuple[Path, Path, Path]:
    """(bad, good, repo): the failure really observed on Go 1.23.9 (as twin records it)."""
    from tests.integration.helpers import env_facts, git_repo, repo_fact, twin_capsule, write_json
    from tests.integration.bisecting import passed, record_failure

    repo = dest / "repo"
    commit = git_repo(repo, {"go.mod": GO_MOD, "toolchain_test.go": TOOLCHAIN_TEST})

    def capsule(go: str, exit_code: int, env: dict[str, Any]) -> dict[str, Any]:
        data = twin_capsule(["go", "test", "./..."], "", exit_code, repo=repo_fact(str(repo), commit), env=env)
        data["command"]["failure"] = None
        data["runtimes"] = {"go": go}
        return data

    bad = write_json(dest / "bad.json", capsule(BAD_GO, 1, env_facts(CI=None, APP_MODE="full")))
    record_failure(bad, "--repo", str(repo))
    good = write_json(dest / "good.json", passed(capsule(GOOD_GO, 0, env_facts(CI="true", APP_MODE="lite"))))
    return bad, good, repo


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """The rows (warm_s, the bundled example's warm replay, is not this project's: unused)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    dest = tmp / "go-bisect"
    dest.mkdir()
    bad, good, repo = go_pair(dest)
    args = ["bisect", str(bad), "--good", str(good), "--repo", str(repo)]
    timed(args, env)  # builds both ends' images
    one, _ = timed([str(bad), "--repo", str(repo), "-n", "1"], env)
    warm, replayed = timed([str(bad), "--repo", str(repo)], env)
    on_s, on = timed(args, env)
    off_s, off = timed([*args, "--no-cache-reuse"], env)
    for name, secs, result, target in (("Go bisect, 3 differences, cache on", on_s, on, "<= 3x"),
                                       ("Go bisect, 3 differences, cache off", off_s, off, "")):
        if result is None:
            row(name, "failed (see stderr)", target, False)
            continue
        found = result["minimal"] == ["runtime:go"]
        t = result["totals"]
        ok = found and (secs <= 3 * warm if target else None)
        verdict = replayed["verdict"] if replayed else "?"
        row(name, f"{secs:.1f}s vs warm replay {warm:.1f}s ({verdict}) = {secs / warm:.1f}x (vs -n 1 {one:.1f}s: "
            f"{secs / one:.1f}x), {t['trials']} trials"
            + ("" if found else ", runtime:go not found"), target, ok if found else False)


if __name__ == "__main__":  # alone: python scripts/bench_go_bisect.py
    import os
    import tempfile

    from benchrow import row

    images = f"replay/bench-go{int(time.time())}"
    try:
        with tempfile.TemporaryDirectory(prefix="replay-bench-go-") as t:
            run(Path(t), {**os.environ, "REPLAY_IMAGE_REPO": images}, 0.0, row)
    finally:  # this run's images only
        ids = subprocess.run(["docker", "images", "-q", images], capture_output=True, text=True).stdout.split()
        if ids:
            subprocess.run(["docker", "rmi", "-f", *sorted(set(ids))], capture_output=True)

"""Benchmarks of issue 3 (replay) and issue 5 (bisect) on the bundled example.

Each figure is a ratio against a floor measured in the same run:
  cold replay          vs a hand-written Dockerfile doing the same steps (target <= 1.3x)
  warm, per attempt    vs running the command natively (target <= +0.5 s)
  second replay        layers built (target 0)
  diff-only change     build steps run and seconds (target: the source layer only, ~1 s)
  bisect (TZ culprit)  trials / builds vs N differing facts, wall time vs one warm replay
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchrow import row

ROOT = Path(__file__).resolve().parent.parent
REPLAY = str(ROOT / ".venv" / "bin" / "replay")
CAPSULE = ROOT / "examples" / "tz-clock" / "capsule.json"
BUNDLE = ROOT / "examples" / "tz-clock" / "repo.bundle"
TAG = f"bench{int(time.time())}"

FLOOR = """FROM {base}
COPY host-ca/ /usr/local/share/ca-certificates/
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \\
    ca-certificates tzdata locales && rm -rf /var/lib/apt/lists/* && update-ca-certificates
RUN localedef -i en_US -f UTF-8 en_US.UTF-8
COPY {node} {npm} /tmp/pkgs/
RUN cd /tmp/pkgs && tar -xzf {node} -C /usr/local --strip-components=1 package/bin/node package/include package/share \\
 && mkdir -p /usr/local/lib/node_modules/npm && tar -xzf {npm} -C /usr/local/lib/node_modules/npm --strip-components=1 \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && cd / && rm -rf /tmp/pkgs
WORKDIR /work/repo
COPY src/package.json src/package-lock.json ./
RUN NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm ci --no-audit --no-fund
COPY src/ ./
"""


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    proc = sh(cmd, **kw)
    return time.monotonic() - start, proc


def replay(*args: str, env: dict[str, str] | None = None) -> tuple[float, dict]:
    secs, proc = timed([REPLAY, *args, "--json"], env=env)
    try:
        return secs, json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        sys.exit(f"bench: replay failed: {proc.stderr.strip().splitlines()[-1:]}")


def prune() -> None:
    """Cold means no layer cache: drop BuildKit's cache (downloads stay cached on the host)."""
    sh(["docker", "builder", "prune", "-af"])
    sh(["/usr/bin/docker", "builder", "prune", "-af"], env={**os.environ, "DOCKER_BUILDKIT": "1"})


def floor_context(tmp: Path) -> Path:
    from runner.capsules import read_capsule
    from runner.config import settings
    from runner.build.plan import PlanOptions
    from runner.build.planner import make_plan
    from runner.build.render import write_context

    s = settings()
    plan = make_plan(read_capsule(CAPSULE), s, PlanOptions(repo=str(BUNDLE)))
    ctx = write_context(plan, s, tmp / "replay-ctx").path
    floor = tmp / "floor"
    floor.mkdir()
    shutil.copytree(ctx / "src", floor / "src")
    shutil.copytree(ctx / "host-ca", floor / "host-ca") if (ctx / "host-ca").exists() else (floor / "host-ca").mkdir()
    node = next((ctx / "pkgs").glob("node-*"))
    npm = next((ctx / "pkgs").glob("npm-*"))
    shutil.copy2(node, floor / node.name)
    shutil.copy2(npm, floor / npm.name)
    (floor / "Dockerfile").write_text(FLOOR.format(base=f"{s.base_repo}:bookworm", node=node.name, npm=npm.name))
    return floor


def buildkit_build(ctx: Path, tag: str) -> float:
    from runner.engine.builders import find_buildkit_cli

    cli = find_buildkit_cli() or ["docker", "build"]
    secs, proc = timed([*cli, "--no-cache", "-q", "-t", tag, str(ctx)], env={**os.environ, "DOCKER_BUILDKIT": "1"})
    if proc.returncode != 0:
        sys.exit(f"bench: floor build failed: {proc.stderr[-500:]}")
    return secs


def diff_capsule(tmp: Path) -> Path:
    data = json.loads(CAPSULE.read_text())
    work = tmp / "clone"
    sh(["git", "clone", "-q", str(BUNDLE), str(work)])
    sh(["git", "-C", str(work), "checkout", "-q", data["repo"]["commit"]])
    dates = work / "src" / "dates.js"
    dates.write_text(dates.read_text() + f"// bench {time.time()}\n")
    data["repo"]["diff"] = sh(["git", "-C", str(work), "diff", "HEAD"]).stdout
    data["repo"]["dirty"] = True
    out = tmp / "with-diff.json"
    out.write_text(json.dumps(data))
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT))
    env = {**os.environ, "REPLAY_IMAGE_REPO": f"replay/{TAG}"}
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as t:
        tmp = Path(t)
        floor = floor_context(tmp)
        prune()
        floor_build = buildkit_build(floor, f"replay/{TAG}-floor:1")
        argv = json.loads(CAPSULE.read_text())["command"]["argv"]
        floor_run, _ = timed(["docker", "run", "--rm", "--network", "none", "-e", "TZ=America/New_York",
                              f"replay/{TAG}-floor:1", *argv])
        prune()
        cold_s, cold = replay(str(CAPSULE), "--repo", str(BUNDLE), "-n", "1", env=env)
        warm1_s, warm = replay(str(CAPSULE), "--repo", str(BUNDLE), "-n", "1", env=env)
        warm3_s, _ = replay(str(CAPSULE), "--repo", str(BUNDLE), "-n", "3", env=env)
        per_attempt = (warm3_s - warm1_s) / 2
        native_s = native_run(floor / "src", argv)
        diff_s, diffed = replay(str(diff_capsule(tmp)), "--repo", str(BUNDLE), "-n", "1", env=env)
        print(f"replay bench on {CAPSULE.relative_to(ROOT)} (builder: {cold['image'].get('builder')})\n")
        print(f"{'measure':<44} {'value':<34} {'target':<22} result")
        ratio = cold_s / (floor_build + floor_run)
        row("cold replay / hand-written floor", f"{cold_s:.1f}s / {floor_build + floor_run:.1f}s = {ratio:.2f}x",
            "<= 1.3x", ratio <= 1.3)
        extra = per_attempt - native_s
        row("warm replay, per attempt vs native", f"{per_attempt:.2f}s vs {native_s:.2f}s (+{extra:.2f}s)",
            "<= +0.5s", extra <= 0.5)
        row("warm replay, whole command (-n 1)", f"{warm1_s:.2f}s", "", None)
        row("second replay: build steps run", f"{warm['image']['steps_run']} (built: {warm['image']['built']})",
            "0", warm["image"]["steps_run"] == 0 and not warm["image"]["built"])
        d = diffed["image"]
        row("diff-only change: steps run, build time", f"{d['steps_run']} steps, {d['build_s']:.2f}s",
            "source layer, ~1s", d["steps_run"] <= 2 and d["build_s"] <= 2.0)
        bisect_bench(tmp, env, warm1_s)
        for name in ISSUE_BENCHES:  # each issue's rows, from its own scripts/bench_*.py
            importlib.import_module(name).run(tmp, env, warm1_s, row)
        sh(["docker", "image", "rm", "-f", f"replay/{TAG}-floor:1"])
        for ref in sh(["docker", "images", "-q", f"replay/{TAG}"]).stdout.split():
            sh(["docker", "image", "rm", "-f", ref])
    return 0


def native_run(src: Path, argv: list[str]) -> float:
    """The command run directly on the host (node here), when the host has the runtime."""
    if shutil.which(argv[0]) is None:
        return float("nan")
    secs, _ = timed(argv, cwd=src, env={**os.environ, "TZ": "America/New_York"})
    return secs


ISSUE_BENCHES = ("bench_farm", "bench_reports", "bench_workers", "bench_fidelity", "bench_farm_scale", "bench_go_bisect",
                 "bench_outcome", "bench_noise", "bench_noise_bisect", "bench_watch", "bench_farm_noise",
                 "bench_debugger", "bench_secrets", "bench_go_warm",
                 "bench_pin")


def bisect_bench(tmp: Path, env: dict[str, str], warm_s: float) -> None:
    try:
        from bench_bisect import run as run_bisect  # type: ignore[import-not-found]
    except ImportError:
        row("bisect", "not measured (scripts/bench_bisect.py missing)", "", None)
        return
    run_bisect(tmp, env, warm_s, row)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
